package stream

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

func TestPlanRepair(t *testing.T) {
	streamAsk := wire.ClientAsk{Stream: true}
	cases := []struct {
		name    string
		d       wire.Dialect
		ct      string
		ask     wire.ClientAsk
		ok      bool
		action  string
		newType string
	}{
		{"openai sse", wire.OpenAIChat, "text/event-stream; charset=utf-8", streamAsk, true, "stream_normalized", ""},
		{"anthropic sse", wire.Anthropic, "text/event-stream", streamAsk, true, "stream_normalized", ""},
		{"responses sse", wire.OpenAIResponses, "Text/Event-Stream", streamAsk, true, "stream_normalized", ""},
		{"gemini sse untouched", wire.Gemini, "text/event-stream", streamAsk, false, "", ""},
		{"json to a streaming client", wire.OpenAIChat, "application/json", streamAsk, true, "json_to_sse", "text/event-stream"},
		{"json to a json client", wire.OpenAIChat, "application/json", wire.ClientAsk{}, true, "json_checked", ""},
		{"anthropic json untouched", wire.Anthropic, "application/json", wire.ClientAsk{}, false, "", ""},
		{"plain text untouched", wire.OpenAIChat, "text/plain", streamAsk, false, "", ""},
	}
	for _, tc := range cases {
		r, ok := PlanRepair(tc.d, tc.ct, tc.ask, Options{})
		if ok != tc.ok || r.Action != tc.action || r.ContentType != tc.newType {
			t.Errorf("%s: ok=%v action=%q type=%q", tc.name, ok, r.Action, r.ContentType)
		}
		if ok && (r.Stream == nil) == (r.Whole == nil) {
			t.Errorf("%s: exactly one of Stream and Whole must be set", tc.name)
		}
	}
}

func TestOpenAIChatErrorSSE(t *testing.T) {
	for _, body := range [][]byte{[]byte(`{"ok":true}`), []byte("not json \xff")} {
		out := OpenAIChatErrorSSE(body)
		var d Decoder
		evs := d.Feed(out)
		if len(evs) != 2 || string(evs[1].Data) != "[DONE]" || !gjson.ValidBytes(evs[0].Data) ||
			!gjson.GetBytes(evs[0].Data, "error.body").Exists() || !bytes.HasSuffix(out, []byte("\n\n")) {
			t.Fatalf("bad error stream for %q: %q", body, out)
		}
	}
}
