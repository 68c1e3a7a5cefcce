package overflow

import "testing"

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

func BenchmarkClassify(b *testing.B) {
	bodies := append([]row(nil), rows...)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range bodies {
			Classify(r.status, r.headers, []byte(r.body))
		}
	}
}
