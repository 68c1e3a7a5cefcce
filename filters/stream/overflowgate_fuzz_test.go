package stream

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

// FuzzOverflowGate: any bytes, any dialect, any chunking: no panic; with a
// Recoverer that always refuses, the client gets exactly what inner alone
// makes of the same chunks, and the gate asks exactly when LeadingError
// sees an overflow error; with one that recovers, the client gets exactly
// what inner makes of the keep-alives that opened the stream and the replay.
func FuzzOverflowGate(f *testing.F) {
	for i, c := range gateCases() {
		f.Add([]byte(c.body), uint8(i), uint64(i))
	}
	for _, file := range []string{"openai_chat.json", "anthropic.json", "openai_responses.json"} {
		for i, sc := range antLoadScenarios(f, file) {
			f.Add([]byte(sc.Upstream.Body), uint8(i), uint64(i))
		}
	}
	f.Add([]byte("\xEF\xBB\xBF: c\r\n\r\nevent: error\r\ndata: {\"error\":\"prompt is too long\"}\r"), uint8(1), uint64(3))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\ndata: {\"error\":{\"message\":\"maximum context length is 10 tokens\"}}"), uint8(0), uint64(4))
	for w, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses} {
		for i, b := range hostileSeeds(d) {
			f.Add(b, uint8(w), uint64(i))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8, seed uint64) {
		dialects := []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses, wire.Gemini, wire.Bedrock}
		d := dialects[int(which)%len(dialects)]
		rng := rand.New(rand.NewPCG(seed, 3))
		var chunks [][]byte
		for i := 0; i < len(body); {
			n := 1 + rng.IntN(48)
			chunks = append(chunks, body[i:min(i+n, len(body))])
			i += n
		}
		useEmit := seed%2 == 1

		refuse := &gateRec{refuse: true}
		got, _ := gateRun(d, false, true, refuse, chunks, useEmit)
		if want := gateAlone(d, false, true, chunks); !bytes.Equal(got, want) {
			t.Fatalf("refusing gate differs from inner alone\ninput %q\ngot  %q\nwant %q", body, got, want)
		}
		v, prefix, err := LeadingError(d, bytes.NewReader(body))
		if err != nil || !bytes.HasPrefix(body, prefix) {
			t.Fatalf("LeadingError: %v, prefix %q", err, prefix)
		}
		if len(body) < gateMaxHold && v.Match() != (len(refuse.verdicts) == 1) {
			t.Fatalf("LeadingError %+v, gate asked %d times", v, len(refuse.verdicts))
		}
		if len(refuse.verdicts) > 1 {
			t.Fatalf("asked %d times", len(refuse.verdicts))
		}

		replay := gateReplay(d)
		if seed%3 == 0 {
			replay = string(body) // any bytes the replay may bring
		}
		accept := &gateRec{body: replay}
		got, _ = gateRun(d, false, true, accept, chunks, useEmit)
		if len(accept.verdicts) == 1 && replay != "" {
			if want := gateAlone(d, false, true, [][]byte{gateKeepAlives(d, body), []byte(replay)}); !bytes.Equal(got, want) {
				t.Fatalf("recovered output differs from inner on the replay\ngot  %q\nwant %q", got, want)
			}
		}
	})
}
