package stream

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// expFuzzContinuer answers with the fuzz input itself, twice, then refuses.
type expFuzzContinuer struct {
	body  []byte
	calls int
}

func (c *expFuzzContinuer) Continue(t wire.Turn) (io.ReadCloser, error) {
	c.calls++
	if c.calls > 2 || !gjson.ValidBytes(t.Assistant) {
		return nil, errTestRefused
	}
	return io.NopCloser(strings.NewReader(string(c.body))), nil
}

// expLeak reports whether a client event is a tool-call event that names
// expand_context.
func expLeak(d wire.Dialect, ev Event) bool {
	if !ev.HasData || !strings.Contains(string(ev.Data), wire.ExpandToolName) {
		return false
	}
	root := gjson.ParseBytes(ev.Data)
	leak := false
	is := func(v gjson.Result) bool { return v.Type == gjson.String && v.Str == wire.ExpandToolName }
	switch d {
	case wire.OpenAIChat:
		root.Get("choices").ForEach(func(_, ch gjson.Result) bool {
			ch.Get("delta.tool_calls").ForEach(func(_, e gjson.Result) bool {
				leak = leak || is(e.Get("function.name")) || is(e.Get("custom.name"))
				return true
			})
			leak = leak || is(ch.Get("delta.function_call.name"))
			return true
		})
	case wire.Anthropic:
		if root.Get("type").Str == "content_block_start" || ev.Name == "content_block_start" {
			leak = root.Get("content_block.type").Str == "tool_use" && is(root.Get("content_block.name"))
		}
	case wire.OpenAIResponses:
		switch root.Get("type").Str {
		case "response.output_item.added", "response.output_item.done":
			leak = root.Get("item.type").Str == "function_call" && is(root.Get("item.name"))
		case "response.completed", "response.incomplete", "response.failed":
			root.Get("response.output").ForEach(func(_, it gjson.Result) bool {
				leak = leak || (it.Get("type").Str == "function_call" && is(it.Get("name")))
				return true
			})
		}
	}
	return leak
}

func FuzzExpanding(f *testing.F) {
	for _, file := range []string{"openai_chat.json", "anthropic.json", "openai_responses.json"} {
		for _, sc := range antLoadScenarios(f, file) {
			f.Add([]byte(sc.Upstream.Body), uint8(0), uint64(1))
		}
	}
	f.Add([]byte(expOAIStream("c1", expOAIText("c1", "x"), expOAICall("c1", 0, "call_p", "expand_context", `{"id":"a"}`),
		expOAICall("c1", 1, "call_r", "f", `{}`), expOAIEnd("c1", "tool_calls"))), uint8(0), uint64(2))
	f.Add([]byte(expAntStart("m")+expAntText(0, "x")+expAntTool(1, "toolu_p", "expand_context", `{"id":"a"}`)+expAntEnd("tool_use")), uint8(1), uint64(3))
	ev, item := expRespCall(0, "fc", "call_p", "expand_context", `{"id":"a"}`)
	f.Add([]byte(expResp("r", ev, item)), uint8(2), uint64(4))
	for w, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses} {
		for i, b := range hostileSeeds(d) {
			f.Add(b, uint8(w), uint64(i))
		}
	}
	f.Fuzz(runFuzzOne)
}

func runFuzzOne(t *testing.T, body []byte, which uint8, seed uint64) {
	dialects := []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses}
	{
		d := dialects[int(which)%len(dialects)]
		rng := rand.New(rand.NewPCG(seed, 1))
		var emitted []byte
		var emit func([]byte) error
		if seed%2 == 0 {
			emit = func(b []byte) error { emitted = append(emitted, b...); return nil }
		}
		x := NewExpanding(d, expNewInner(d)(), expNewInner(d), &expFuzzContinuer{body: body}, emit)
		var out []byte
		for i := 0; i < len(body); {
			n := 1 + rng.IntN(32)
			w := x.Write(body[i:min(i+n, len(body))])
			out = append(append(out, emitted...), w...)
			emitted = nil
			i += n
		}
		w := x.Close()
		out = append(append(out, emitted...), w...)
		var dec Decoder
		evs := dec.Feed(out)
		if tail := dec.Flush(); tail != nil {
			evs = append(evs, *tail)
		}
		for _, ev := range evs {
			if expLeak(d, ev) {
				t.Fatalf("expand_context call reached the client: %q", ev.Raw)
			}
		}
	}
}
