package wire_test

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

func seedTurn(f *testing.F) {
	for d, dialect := range wire.Dialects {
		req := wiretest.Request(dialect, "a\nb", "é🙂")
		f.Add([]byte(answerFor(dialect)), req, uint8(d))
		f.Add([]byte(answerFor(dialect)), []byte(`{"input":"hi","contents":[],"messages":[]}`), uint8(d))
		f.Add([]byte(` {"choices":[{"message":{"tool_calls":{"a":{"function":{"name":"expand_context"}}}}}]} `), []byte(`{}`), uint8(d))
	}
	f.Add([]byte(geminiIDs), []byte(`{"contents":[{"parts":[{"function_call":{"name":"x"}}]}]}`), uint8(3))
	f.Add([]byte(chatLegacy), []byte(`{"messages":[ ]}`), uint8(0))
}

// FuzzTurnFromAnswer: arbitrary answers never panic; a Turn with calls has
// an Assistant of the dialect's request type; StripExpandCalls leaves valid
// JSON and never changes what it says it did not.
func FuzzTurnFromAnswer(f *testing.F) {
	seedTurn(f)
	f.Fuzz(func(t *testing.T, answer, _ []byte, which uint8) {
		d := wire.Dialects[int(which)%len(wire.Dialects)]
		in := bytes.Clone(answer)
		turn, total, err := wire.TurnFromAnswer(d, answer)
		if !bytes.Equal(answer, in) {
			t.Fatal("answer modified")
		}
		if err == nil && len(turn.Calls) > 0 {
			if len(turn.Calls) > total {
				t.Fatalf("%d calls of %d", len(turn.Calls), total)
			}
			a := gjson.ParseBytes(turn.Assistant)
			if !gjson.ValidBytes(turn.Assistant) || (d == wire.OpenAIResponses) != a.IsArray() {
				t.Fatalf("assistant %s", turn.Assistant)
			}
		}
		out, changed := wire.StripExpandCalls(d, answer)
		if !bytes.Equal(answer, in) {
			t.Fatal("answer modified")
		}
		if !changed && !bytes.Equal(out, in) {
			t.Fatal("unchanged answer differs")
		}
		if changed && !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON:\n%s", out)
		}
	})
}

// FuzzContinue: arbitrary answers and requests never panic; a continuation
// returned without error is valid JSON that keeps the request's first
// bytes, and keeps the pairing rules for the shared builder's requests.
func FuzzContinue(f *testing.F) {
	seedTurn(f)
	f.Fuzz(func(t *testing.T, answer, request []byte, which uint8) {
		d := wire.Dialects[int(which)%len(wire.Dialects)]
		turn, _, err := wire.TurnFromAnswer(d, answer)
		if err != nil || len(turn.Calls) == 0 {
			return
		}
		in := bytes.Clone(request)
		out, err := wire.Continue(d, request, turn, resultsFor(turn))
		if !bytes.Equal(request, in) {
			t.Fatal("request modified")
		}
		if err != nil {
			if out != nil {
				t.Fatal("output with an error")
			}
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("invalid JSON:\n%s", out)
		}
		if len(out) <= len(in) {
			t.Fatalf("nothing appended:\n%s", out)
		}
		// The conversation list is the request's only edit: everything from
		// its closing bracket to the end is kept, unless it was created or a
		// string input was turned into a list.
		k := 0
		for k < len(in) && in[k] == out[k] {
			k++
		}
		if !bytes.HasSuffix(out, in[k:]) && d != wire.OpenAIResponses {
			t.Fatalf("more than one insertion:\n in %s\nout %s", in, out)
		}
		if bytes.Equal(in, wiretest.Request(d, "a\nb", "é🙂")) {
			if err := wiretest.CheckPairing(d, out); err != nil {
				t.Fatalf("pairing: %v\n%s", err, out)
			}
		}
	})
}
