package overflow

import (
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

func FuzzClassify(f *testing.F) {
	for _, r := range rows {
		f.Add(r.status, []byte(r.body), "")
	}
	f.Add(429, []byte(`{"error":{"code":"context_length_exceeded","message":"maximum context length"}}`), "")
	f.Add(400, []byte(`[[[{"error":`), "error")
	f.Add(200, []byte(`{"type":"response.failed","response":{"error":{"code":"context_length_exceeded"}}}`), "response.failed")
	f.Fuzz(func(t *testing.T, status int, body []byte, event string) {
		hdr := map[string]string{"x-amzn-errortype": event}
		v := Classify(status, hdr, body)
		if status == 429 && v.Class != NotOurs {
			t.Fatalf("429 classified as %q (%q)", v.Class, v.Reason)
		}
		if v.Class == ProviderLimit && status != 400 {
			t.Fatalf("ProviderLimit on status %d", status)
		}
		if v.Class != NotOurs && v.Reason == "" {
			t.Fatalf("match without reason")
		}
		if v.Provider == "" {
			t.Fatalf("empty provider")
		}
		if fit, ok := v.Tokens.OutputFit(); ok && (fit <= 0 || fit >= v.Tokens.Limit) {
			t.Fatalf("output fit %d of %+v", fit, v.Tokens)
		}
		if v.Class == NotOurs && v.Tokens != (Tokens{}) {
			t.Fatalf("counts without an overflow: %+v", v)
		}
		// Deterministic.
		if w := Classify(status, hdr, body); w != v {
			t.Fatalf("non-deterministic: %+v vs %+v", v, w)
		}
		s := ClassifyStreamEvent(event, body)
		if s.Class == ProviderLimit || s.Class == PayloadTooLarge && s.Reason == "status_413" {
			t.Fatalf("stream verdict used a status rule: %+v", s)
		}
		if s.Provider == "" {
			t.Fatalf("empty stream provider")
		}
	})
}

func FuzzCompactionKind(f *testing.F) {
	f.Add(`{"input":[{"type":"compaction_trigger"}]}`, 0)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"a detailed summary of the conversation so far"}]}]}`, 1)
	f.Add(`{"messages":[{"role":"user","content":"Provide a detailed prompt for continuing our conversation above."}]}`, 2)
	dialects := []wire.Dialect{wire.OpenAIResponses, wire.Anthropic, wire.OpenAIChat, wire.Gemini, wire.Bedrock}
	f.Fuzz(func(t *testing.T, body string, d int) {
		dl := dialects[uint(d)%uint(len(dialects))]
		k := CompactionKind(dl, []byte(body))
		if k != "" && k != CompactionCodex && k != CompactionSummary {
			t.Fatalf("kind %q", k)
		}
		if k == CompactionCodex && dl != wire.OpenAIResponses {
			t.Fatalf("codex kind for %s", dl)
		}
		for _, c := range []int{0, 1, 1 << 20} {
			if ev, ok := CanonicalStreamError(dl, c, c/2); ok && len(ev) == 0 {
				t.Fatal("empty stream form")
			}
		}
	})
}

func BenchmarkClassify(b *testing.B) {
	bodies := append([]row(nil), rows...)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range bodies {
			Classify(r.status, r.headers, []byte(r.body))
		}
	}
}
