package stream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// FixOpenAIChatJSON repairs a non-streaming chat.completion body (client
// asked stream:false). With opts.XMLToolCalls, <invoke> blocks in a choice's
// message.content become message.tool_calls after any native ones; the
// content keeps the surrounding text, trimmed (seed A.2.3 item 30), or null
// when nothing remains; a final_answer block becomes its answer text. Tool
// calls missing an id get one, missing a type get "function", without
// arguments get "{}". finish_reason is "tool_calls" whenever the message has
// calls. It returns the input and changed=false when nothing needed fixing
// or the body is not a chat.completion. Edits are in place (sjson), so
// unknown fields pass through.
func FixOpenAIChatJSON(body []byte, opts Options) (out []byte, changed bool) {
	if !oaiIsCompletion(body) {
		return body, false
	}
	out = body
	nChoices := len(gjson.GetBytes(body, "choices").Array())
	for i := 0; i < nChoices; i++ {
		prefix := "choices." + strconv.Itoa(i)
		choice := gjson.GetBytes(out, prefix)
		msg := choice.Get("message")
		if !msg.IsObject() {
			continue
		}
		var calls [][]byte
		callsChanged := false
		oaiEach(msg.Get("tool_calls"), func(tc gjson.Result) bool {
			fixed, c := oaiFixToolCall(tc, opts)
			calls = append(calls, fixed)
			callsChanged = callsChanged || c
			return true
		})
		if content := msg.Get("content"); opts.XMLToolCalls && content.Type == gjson.String &&
			strings.Contains(content.Str, xmlOpen) {
			var s xmlScanner
			pieces := append(s.Feed(content.Str), s.Flush()...)
			var text strings.Builder
			blocks := 0
			for _, p := range pieces {
				switch p.Kind {
				case xmlText:
					text.WriteString(p.Text)
				case xmlFinal:
					text.WriteString(p.Text)
					blocks++
				case xmlCall:
					blocks++
					b := []byte(`{"id":`)
					b = wire.AppendString(b, opts.callID())
					b = append(b, `,"type":"function","function":{"name":`...)
					b = wire.AppendString(b, p.Name)
					b = append(b, `,"arguments":`...)
					b = wire.AppendString(b, p.Args)
					calls = append(calls, append(b, "}}"...))
					callsChanged = true
				}
			}
			if blocks > 0 {
				rest := strings.TrimSpace(text.String())
				var raw []byte
				if rest == "" && len(calls) > 0 {
					raw = []byte("null")
				} else {
					raw = wire.AppendString(nil, rest)
				}
				out, _ = sjson.SetRawBytes(out, prefix+".message.content", raw)
				changed = true
			}
		}
		if callsChanged {
			arr := append([]byte{'['}, bytes.Join(calls, []byte{','})...)
			out, _ = sjson.SetRawBytes(out, prefix+".message.tool_calls", append(arr, ']'))
			changed = true
		}
		if len(calls) > 0 && choice.Get("finish_reason").Str != "tool_calls" {
			out, _ = sjson.SetBytes(out, prefix+".finish_reason", "tool_calls")
			changed = true
		}
	}
	if !changed {
		return body, false
	}
	return out, true
}

// oaiFixToolCall gives a message tool call the fields every client needs.
func oaiFixToolCall(tc gjson.Result, opts Options) ([]byte, bool) {
	out := []byte(tc.Raw)
	if !tc.IsObject() {
		return out, false
	}
	changed := false
	if id := tc.Get("id"); id.Type != gjson.String || id.Str == "" {
		out, _ = sjson.SetBytes(out, "id", opts.callID())
		changed = true
	}
	if tc.Get("type").Str == "" {
		out, _ = sjson.SetBytes(out, "type", "function")
		changed = true
	}
	switch args := tc.Get("function.arguments"); {
	case args.Type == gjson.String && strings.TrimSpace(args.Str) != "":
	case args.IsObject() || args.IsArray():
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(args.Raw)) == nil {
			out, _ = sjson.SetBytes(out, "function.arguments", buf.String())
			changed = true
		}
	default:
		out, _ = sjson.SetBytes(out, "function.arguments", "{}")
		changed = true
	}
	return out, changed
}

// oaiIsCompletion: a JSON object that is a chat.completion (or has its
// shape: choices carrying a message).
func oaiIsCompletion(body []byte) bool {
	body = bytes.TrimSpace(body)
	if !oaiLooksJSON(body) || !jsonsafe.Valid(body) {
		return false
	}
	root := gjson.ParseBytes(body)
	if !root.Get("choices").IsArray() {
		return false
	}
	obj := root.Get("object")
	return obj.Str == "chat.completion" || (!obj.Exists() && root.Get("choices.0.message").IsObject())
}

// OpenAIChatJSONToSSE converts a chat.completion JSON answer into a
// well-formed chunk stream (client asked stream:true but the upstream
// answered JSON): a role chunk, reasoning and content, the tool calls (start
// delta, then the whole arguments in one fragment), the finish chunk, a
// usage chunk if opts.IncludeUsage and the JSON has usage, [DONE]. XML tool
// calls are parsed first as in FixOpenAIChatJSON. ok=false if body is not a
// chat.completion.
func OpenAIChatJSONToSSE(body []byte, opts Options) (sse []byte, ok bool) {
	if !oaiIsCompletion(body) {
		return nil, false
	}
	fixed, _ := FixOpenAIChatJSON(body, opts)
	fixed = bytes.TrimSpace(fixed)
	root := gjson.ParseBytes(fixed)
	top := oaiParseTop(fixed)
	n := &oaiChat{opts: opts, mode: oaiChatMode}
	n.opts.XMLToolCalls = false // already applied
	n.learn(&top)
	choice := gjson.Result{}
	oaiEach(root.Get("choices"), func(c gjson.Result) bool {
		if idx := c.Get("index"); !idx.Exists() || idx.Int() == 0 {
			choice = c
			return false
		}
		return true
	})
	msg := choice.Get("message")
	n.ensureRole()
	for _, k := range []string{"reasoning_content", "reasoning", "refusal"} {
		if v := msg.Get(k); v.Type == gjson.String && v.Str != "" {
			b := append([]byte(`{"`+k+`":`), v.Raw...)
			n.emitDelta(append(b, '}'))
		}
	}
	if content := msg.Get("content"); content.Type == gjson.String && content.Str != "" {
		n.emitText(content.Raw)
	}
	oaiEach(msg.Get("tool_calls"), func(tc gjson.Result) bool {
		c := &oaiCall{upID: tc.Get("id").Str, name: tc.Get("function.name").Str}
		if c.name == "" {
			return true // a call without a name cannot be run
		}
		// The whole arguments in one fragment, as they are (§3.6 rule 8).
		n.startCall(c)
		n.emitArgs(c, []byte(tc.Get("function.arguments").Str))
		return true
	})
	n.upFinish = choice.Get("finish_reason").Str
	if usage := root.Get("usage"); usage.IsObject() {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(usage.Raw)) == nil {
			n.heldUsage = buf.String()
		}
	}
	n.end(nil)
	return n.out, true
}
