package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Turn is a model turn that called expand_context, in the form a request of
// the same dialect takes, so it can be appended to the conversation and sent
// again (the continuation). Only the expand_context calls are kept in it:
// when a model mixes real and phantom calls, the phantoms are resolved first
// and the model asks for the real ones again in its next turn.
type Turn struct {
	// Assistant is what Continue appends as the model's turn:
	//   - OpenAI Chat: one assistant message object;
	//   - OpenAI Responses: a JSON array of input items (the answer's output
	//     items: reasoning, messages, the function_call items kept);
	//   - Anthropic: one {"role":"assistant","content":[…]} message
	//     (thinking blocks with their signatures kept, as the API requires);
	//   - Gemini: one {"role":"model","parts":[…]} content;
	//   - Bedrock: one {"role":"assistant","content":[…]} message.
	Assistant []byte
	// Calls are the expand_context calls in it, in order.
	Calls []ExpandCall
}

// ExpandResult answers one expand_context call: the original text, or a
// clear not-found message.
type ExpandResult struct {
	Call ExpandCall
	Text string
}

// Item types a Responses answer can hold that the API also takes back as
// input items (openapi InputItem → Item union): the model's own output and
// the record of tools the provider ran itself. Anything else in output[]
// is either a call the client must answer (dropped with the other real
// calls) or a type this build does not know, which is safer left out of a
// request than sent and rejected.
var responsesReplayable = map[string]bool{
	"message":               true,
	"reasoning":             true,
	"compaction":            true,
	"web_search_call":       true,
	"file_search_call":      true,
	"image_generation_call": true,
	"code_interpreter_call": true,
	"mcp_call":              true,
	"mcp_list_tools":        true,
}

// chatAssistantKeys are the members of a Chat answer's message that the
// request's assistant message takes (openapi
// ChatCompletionRequestAssistantMessage: role, content, refusal, name,
// audio, tool_calls, function_call). OpenAI validates messages strictly
// ("Additional properties are not allowed"), so response-only members such
// as annotations are dropped. reasoning_content / reasoning /
// reasoning_details are never sent by OpenAI itself; the compatible servers
// that send them (DeepSeek, vLLM, OpenRouter) want them back within a tool
// loop, so they are kept.
var chatAssistantKeys = map[string]bool{
	"role": true, "content": true, "refusal": true, "name": true,
	"audio": true, "tool_calls": true, "function_call": true,
	"reasoning_content": true, "reasoning": true, "reasoning_details": true,
}

// TurnFromAnswer builds the Turn for a complete non-streaming answer of
// dialect d: the expand_context calls (as FindExpandCalls finds them),
// how many tool calls the answer makes in all, and the model's turn in
// request form with every real call dropped. A model that mixes real and
// phantom calls gets the phantoms answered first and asks for the real
// ones again, so no real call is left unanswered in the continuation.
// With no expand_context call, t is empty (Assistant nil).
func TurnFromAnswer(d Dialect, answer []byte) (t Turn, totalCalls int, err error) {
	calls, total, err := FindExpandCalls(d, answer)
	if err != nil || len(calls) == 0 {
		return Turn{}, total, err
	}
	root := gjson.ParseBytes(answer)
	root.Index = rootIndex(answer)
	var a []byte
	switch d {
	case OpenAIChat:
		a, err = chatAssistant(answer, root.Get("choices.0.message"))
	case OpenAIResponses:
		a, _, err = rewriteEntries(answer, root.Get("output"), func(_, it gjson.Result) ([]byte, bool) {
			typ := it.Get("type").String()
			if typ == "function_call" {
				return nil, it.Get("name").String() == ExpandToolName
			}
			return nil, responsesReplayable[typ]
		})
	case Anthropic:
		// Everything the model said stays, thinking and redacted_thinking
		// with their signatures: the API rejects a tool_use continuation
		// whose thinking blocks were dropped or altered. Server tool blocks
		// (server_tool_use, *_tool_result) were run by Anthropic and are
		// valid assistant content on the way back in.
		var content []byte
		content, _, err = rewriteEntries(answer, root.Get("content"), func(_, b gjson.Result) ([]byte, bool) {
			return nil, b.Get("type").String() != "tool_use" || b.Get("name").String() == ExpandToolName
		})
		a = wrap(`{"role":"assistant","content":`, content)
	case Gemini:
		var parts []byte
		parts, _, _, err = geminiKeepParts(answer, root.Get("candidates.0.content.parts"), true)
		a = wrap(`{"role":"model","parts":`, parts)
	case Bedrock:
		// reasoningContent blocks stay: Bedrock, like Anthropic, wants the
		// signed reasoning back on a toolUse turn.
		var content []byte
		content, _, err = rewriteEntries(answer, root.Get("output.message.content"), func(_, b gjson.Result) ([]byte, bool) {
			tu := b.Get("toolUse")
			return nil, !tu.Exists() || tu.Get("name").String() == ExpandToolName
		})
		a = wrap(`{"role":"assistant","content":`, content)
	}
	if err != nil {
		return Turn{}, total, fmt.Errorf("turn from answer: %w", err)
	}
	if !jsonsafe.Valid(a) {
		return Turn{}, total, fmt.Errorf("turn from answer: %w: result is not valid JSON", ErrBadEdit)
	}
	return Turn{Assistant: a, Calls: calls}, total, nil
}

func wrap(head string, inner []byte) []byte {
	out := make([]byte, 0, len(head)+len(inner)+1)
	return append(append(append(out, head...), inner...), '}')
}

func isExpandToolCall(c gjson.Result) bool {
	if f := c.Get("function"); f.Exists() {
		return f.Get("name").String() == ExpandToolName
	}
	return c.Get("custom.name").String() == ExpandToolName
}

// chatAssistant turns choices[0].message into the request's assistant
// message: request members only, tool_calls narrowed to expand_context,
// audio reduced to its id (the request form is {"id"} alone). content is
// required in the request (null allowed with tool_calls), so an absent one
// is written as null.
func chatAssistant(body []byte, msg gjson.Result) ([]byte, error) {
	if !msg.IsObject() {
		return nil, fmt.Errorf("%w: choices[0].message is not an object", ErrNotJSON)
	}
	var inner error
	out, _, err := rewriteEntries(body, msg, func(k, v gjson.Result) ([]byte, bool) {
		if !chatAssistantKeys[k.Str] {
			return nil, false
		}
		switch k.Str {
		case "role":
			// The message goes back as the assistant's turn, and the tool
			// messages after it answer its tool_calls only if it is one.
			if v.Type != gjson.String || v.Str != "assistant" {
				inner = fmt.Errorf("%w: choices[0].message.role is %s, not \"assistant\"", ErrBadEdit, v.Raw)
			}
		case "refusal":
			return nil, v.Type != gjson.Null
		case "function_call":
			return nil, v.Get("name").String() == ExpandToolName
		case "audio":
			id := v.Get("id")
			if id.Type != gjson.String {
				return nil, false
			}
			return []byte(`{"id":` + id.Raw + `}`), true
		case "tool_calls":
			calls, n, err := keepCount(body, v, isExpandToolCall)
			if err != nil {
				inner = err
			}
			// An empty tool_calls array is refused (minItems 1).
			return calls, err == nil && n > 0
		}
		return nil, true
	})
	if err == nil {
		err = inner
	}
	if err != nil {
		return nil, err
	}
	m := gjson.ParseBytes(out)
	if !m.Get("role").Exists() {
		if out, err = insertBeforeClose(out, m, `"role":"assistant"`); err != nil {
			return nil, err
		}
		m = gjson.ParseBytes(out)
	}
	if !m.Get("content").Exists() {
		out, err = insertBeforeClose(out, m, `"content":null`)
	}
	return out, err
}

// keepCount is rewriteEntries for an array with a plain keep test; n is the
// number of elements kept.
func keepCount(body []byte, arr gjson.Result, keep func(gjson.Result) bool) (out []byte, n int, err error) {
	out, _, err = rewriteEntries(body, arr, func(_, v gjson.Result) ([]byte, bool) {
		k := keep(v)
		if k {
			n++
		}
		return nil, k
	})
	return out, n, err
}

// geminiFunctionCall returns the part's functionCall (or function_call)
// object, or a non-existent result.
func geminiFunctionCall(p gjson.Result) gjson.Result {
	if fc := p.Get("functionCall"); fc.Exists() {
		return fc
	}
	return p.Get("function_call")
}

// geminiKeepParts returns parts with the functionCall parts dropped that
// are (expand=true: not) expand_context calls. Gemini 3 puts the
// thoughtSignature of parallel calls on the first functionCall part only
// and validates the first call of each step, so the signature of a dropped
// part moves to the next kept call that has none; otherwise the remaining
// calls would be refused when sent back. kept counts the parts left; a
// signature with no call left to take it stays on an empty text part.
func geminiKeepParts(body []byte, parts gjson.Result, expand bool) (out []byte, kept int, changed bool, err error) {
	carry := ""
	out, changed, err = rewriteEntries(body, parts, func(_, p gjson.Result) ([]byte, bool) {
		fc := geminiFunctionCall(p)
		if !fc.IsObject() {
			kept++
			return nil, true
		}
		sigKey, sig := "thoughtSignature", p.Get("thoughtSignature")
		if !sig.Exists() {
			sigKey, sig = "thought_signature", p.Get("thought_signature")
		}
		if (fc.Get("name").String() == ExpandToolName) != expand {
			if sig.Exists() && carry == "" {
				carry = string(QuoteString(sigKey)) + ":" + sig.Raw
			}
			return nil, false
		}
		kept++
		if carry == "" || sig.Exists() {
			return nil, true
		}
		raw := []byte(p.Raw)
		withSig, e := insertBeforeClose(raw, gjson.ParseBytes(raw), carry)
		if e != nil {
			return nil, true
		}
		carry = ""
		return withSig, true
	})
	if err == nil && kept == 0 && carry != "" {
		// Nothing left to carry it: an empty text part keeps it, the shape
		// Gemini itself streams at the end of a turn.
		out = []byte(`[{"text":"",` + carry + `}]`)
		kept = 1
	}
	return out, kept, changed, err
}

// rewriteEntries returns a copy of the array or object v (located in body)
// with entries dropped or their values replaced, as fn decides: keep=false
// drops the entry, a non-nil raw replaces its value. Kept entries, and the
// separator and space before each, are copied as they were, so nothing
// the callback leaves alone changes. changed reports whether any entry was
// dropped or replaced.
func rewriteEntries(body []byte, v gjson.Result, fn func(key, val gjson.Result) (raw []byte, keep bool)) (out []byte, changed bool, err error) {
	if !v.IsArray() && !v.IsObject() {
		return nil, false, fmt.Errorf("%w: expected an array or object", ErrBadEdit)
	}
	s, err := locate(body, v)
	if err != nil {
		return nil, false, err
	}
	end := s.End - 1
	for end > s.Start && isSpace(body[end]) {
		end--
	}
	out = append(make([]byte, 0, s.End-s.Start), body[s.Start])
	prev, first := s.Start+1, true
	bad := false
	v.ForEach(func(k, val gjson.Result) bool {
		start := val.Index
		if v.IsObject() {
			start = k.Index
		}
		valEnd := val.Index + len(val.Raw)
		if start < prev || valEnd > end || string(body[val.Index:valEnd]) != val.Raw {
			bad = true
			return false
		}
		raw, keep := fn(k, val)
		if !keep {
			changed = true
			prev = valEnd
			return true
		}
		sep := body[prev:start]
		if first {
			// Only the space after a dropped entry's comma: no comma may lead.
			if i := bytes.IndexByte(sep, ','); i >= 0 {
				sep = sep[i+1:]
			}
		}
		out = append(out, sep...)
		if raw == nil {
			out = append(out, body[start:valEnd]...)
		} else {
			changed = true
			out = append(out, body[start:val.Index]...)
			out = append(out, raw...)
		}
		first, prev = false, valEnd
		return true
	})
	if bad {
		return nil, false, fmt.Errorf("%w: cannot locate entries", ErrBadEdit)
	}
	if first {
		return append(out, body[end]), changed, nil
	}
	out = append(out, body[prev:end+1]...)
	return out, changed, nil
}

// ErrNoConversation means the request has no conversation list of the type
// its API defines, so a continuation cannot be appended to it.
var ErrNoConversation = errors.New("request has no conversation list")

// Continue appends t.Assistant and then the answers to its calls (results,
// one per call of t.Calls, in order) at the end of the request's
// conversation. Every byte of the request before the end of the list is
// kept, so the provider's cached prefix still matches. On error it returns
// nil. What is appended:
//   - OpenAI Chat: the assistant message, then one role "tool" message per
//     result (role "function" for a legacy function_call), which must all
//     follow the assistant message before anything else;
//   - Responses: the items of t.Assistant, then one function_call_output
//     per result; a string input becomes [{"role":"user","content":…}]
//     first, the list form the API takes for the same thing; a missing or
//     null input is created;
//   - Anthropic: the assistant message, then one user message holding all
//     the tool_result blocks: they must all sit at the start of the very
//     next message;
//   - Gemini: the model content, then one user content with one
//     functionResponse part per call (the API wants the counts equal),
//     carrying the call's id only when the call had one, and spelled in the
//     request's key style (functionResponse or function_response);
//   - Bedrock: the assistant message, then one user message with all the
//     toolResult blocks (Bedrock refuses results split over messages).
func Continue(d Dialect, request []byte, t Turn, results []ExpandResult) ([]byte, error) {
	out, err := continueTurn(d, request, t, results)
	if err != nil {
		return nil, fmt.Errorf("continue: %w", err)
	}
	if !jsonsafe.Valid(out) {
		return nil, fmt.Errorf("continue: %w: result is not valid JSON", ErrBadEdit)
	}
	return out, nil
}

func continueTurn(d Dialect, request []byte, t Turn, results []ExpandResult) ([]byte, error) {
	if !d.Valid() {
		return nil, fmt.Errorf("unknown dialect %q", d)
	}
	if len(t.Calls) == 0 {
		return nil, errors.New("the turn has no expand_context call")
	}
	if len(results) != len(t.Calls) {
		return nil, fmt.Errorf("%d results for %d calls", len(results), len(t.Calls))
	}
	for i, r := range results {
		if r.Call.CallID != t.Calls[i].CallID {
			return nil, fmt.Errorf("result %d answers %q, the call is %q", i, r.Call.CallID, t.Calls[i].CallID)
		}
		// The assistant part carries the id's bytes as the upstream wrote
		// them, the result a quoted copy: a JSON string is UTF-8 (RFC 8259
		// §8.1), so quoting turns invalid bytes into U+FFFD and the two
		// would no longer pair. No provider writes such ids; the answer
		// goes to the client as it came.
		if !utf8.ValidString(r.Call.CallID) {
			return nil, fmt.Errorf("%w: call %d's id is not valid UTF-8", ErrBadEdit, i)
		}
	}
	if !jsonsafe.Valid(request) {
		return nil, ErrNotJSON
	}
	root := gjson.ParseBytes(request)
	if !root.IsObject() {
		return nil, ErrNotJSON
	}
	root.Index = rootIndex(request)
	if !jsonsafe.Valid(t.Assistant) {
		return nil, fmt.Errorf("%w: the turn's assistant part is not valid JSON", ErrBadEdit)
	}
	asst := gjson.ParseBytes(t.Assistant)
	if d == OpenAIResponses {
		if !asst.IsArray() {
			return nil, fmt.Errorf("%w: the turn's items are not an array", ErrBadEdit)
		}
	} else if !asst.IsObject() {
		return nil, fmt.Errorf("%w: the turn's message is not an object", ErrBadEdit)
	}
	q := func(s string) string { return string(QuoteString(s)) }
	var elems []string
	switch d {
	case OpenAIChat:
		ids := map[string]bool{}
		asst.Get("tool_calls").ForEach(func(_, c gjson.Result) bool {
			ids[c.Get("id").String()] = true
			return true
		})
		legacy := asst.Get("function_call.name").String() == ExpandToolName
		elems = append(elems, asst.Raw)
		for _, r := range results {
			if legacy && !ids[r.Call.CallID] {
				elems = append(elems, `{"role":"function","name":`+quotedName+`,"content":`+q(r.Text)+`}`)
			} else {
				elems = append(elems, `{"role":"tool","tool_call_id":`+q(r.Call.CallID)+`,"content":`+q(r.Text)+`}`)
			}
		}
		return appendConversation(request, root, "messages", elems)
	case OpenAIResponses:
		asst.ForEach(func(_, it gjson.Result) bool {
			elems = append(elems, it.Raw)
			return true
		})
		for _, r := range results {
			elems = append(elems, `{"type":"function_call_output","call_id":`+q(r.Call.CallID)+`,"output":`+q(r.Text)+`}`)
		}
		return continueResponses(request, root, elems)
	case Anthropic:
		var b strings.Builder
		b.WriteString(`{"role":"user","content":[`)
		for i, r := range results {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"tool_result","tool_use_id":` + q(r.Call.CallID) + `,"content":` + q(r.Text) + `}`)
		}
		b.WriteString(`]}`)
		return appendConversation(request, root, "messages", []string{asst.Raw, b.String()})
	case Gemini:
		withID := map[string]bool{}
		asst.Get("parts").ForEach(func(_, p gjson.Result) bool {
			fc := geminiFunctionCall(p)
			if id := fc.Get("id"); fc.Get("name").String() == ExpandToolName && id.Exists() {
				withID[id.String()] = true
			}
			return true
		})
		key := "functionResponse"
		if geminiSnakeCase(root) {
			key = "function_response"
		}
		var b strings.Builder
		b.WriteString(`{"role":"user","parts":[`)
		for i, r := range results {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"` + key + `":{"name":` + quotedName)
			if withID[r.Call.CallID] {
				b.WriteString(`,"id":` + q(r.Call.CallID))
			}
			b.WriteString(`,"response":{"content":` + q(r.Text) + `}}}`)
		}
		b.WriteString(`]}`)
		return appendConversation(request, root, "contents", []string{asst.Raw, b.String()})
	case Bedrock:
		var b strings.Builder
		b.WriteString(`{"role":"user","content":[`)
		for i, r := range results {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"toolResult":{"toolUseId":` + q(r.Call.CallID) + `,"content":[{"text":` + q(r.Text) + `}]}}`)
		}
		b.WriteString(`]}`)
		return appendConversation(request, root, "messages", []string{asst.Raw, b.String()})
	}
	return nil, fmt.Errorf("unknown dialect %q", d)
}

// appendConversation appends elems at the end of the array root[key].
func appendConversation(body []byte, root gjson.Result, key string, elems []string) ([]byte, error) {
	list := root.Get(key)
	if !list.IsArray() {
		return nil, fmt.Errorf("%w: %s is %s", ErrNoConversation, key, list.Type)
	}
	return appendElem(body, list, strings.Join(elems, ","))
}

// continueResponses appends to input, which the API also takes as a plain
// string (one user message) or leaves out when previous_response_id
// carries the conversation.
func continueResponses(body []byte, root gjson.Result, elems []string) ([]byte, error) {
	in := root.Get("input")
	switch {
	case !in.Exists() || in.Type == gjson.Null:
		e, err := setMember(body, root, root.Get, "input", "["+strings.Join(elems, ",")+"]")
		if err != nil {
			return nil, err
		}
		return Apply(body, []Edit{e})
	case in.Type == gjson.String:
		s, err := locate(body, in)
		if err != nil {
			return nil, err
		}
		list := `[{"role":"user","content":` + in.Raw + `},` + strings.Join(elems, ",") + `]`
		return Apply(body, []Edit{{Span: s, Raw: list}})
	case in.IsArray():
		return appendElem(body, in, strings.Join(elems, ","))
	}
	return nil, fmt.Errorf("%w: input is %s", ErrNoConversation, in.Type)
}

// geminiSnakeCase reports whether the request spells its keys in proto
// field-name style (function_call, system_instruction) rather than the
// lowerCamelCase JSON names. The API takes both; the added parts follow
// the request so it stays in one style. The parts decide first, then the
// top-level members; camelCase is the default.
func geminiSnakeCase(root gjson.Result) bool {
	snake, camel := 0, 0
	count := func(k string) {
		switch k {
		case "function_call", "function_response", "inline_data", "file_data", "thought_signature",
			"executable_code", "code_execution_result", "system_instruction", "generation_config",
			"tool_config", "safety_settings", "cached_content":
			snake++
		case "functionCall", "functionResponse", "inlineData", "fileData", "thoughtSignature",
			"executableCode", "codeExecutionResult", "systemInstruction", "generationConfig",
			"toolConfig", "safetySettings", "cachedContent":
			camel++
		}
	}
	root.Get("contents").ForEach(func(_, c gjson.Result) bool {
		c.Get("parts").ForEach(func(_, p gjson.Result) bool {
			p.ForEach(func(k, _ gjson.Result) bool {
				count(k.Str)
				return true
			})
			return true
		})
		return true
	})
	if snake != camel {
		return snake > camel
	}
	root.ForEach(func(k, _ gjson.Result) bool {
		count(k.Str)
		return true
	})
	return snake > camel
}

// StripExpandCalls removes every expand_context call from a complete
// non-streaming answer, for when the loop limit is reached: the client
// never offered that tool and must never see a call to it. When no tool
// call is left, the stop signal is fixed so the client does not wait for
// calls that are not there:
//   - OpenAI Chat (every choice): finish_reason "tool_calls" /
//     "function_call" becomes "stop"; an emptied tool_calls is removed;
//   - Anthropic: stop_reason "tool_use" becomes "end_turn";
//   - Bedrock: stopReason "tool_use" becomes "end_turn";
//   - Gemini (every candidate): finishReason is STOP for calls already; a
//     candidate left with no part gets one empty text part, the shape
//     Gemini streams at the end of a turn, which every SDK reads as "no
//     text" — an empty parts list is what a blocked answer looks like and
//     some clients treat it so;
//   - Responses: the function_call items go; status and the rest stay.
//
// Invalid JSON, or nothing to strip, gives (answer, false).
func StripExpandCalls(d Dialect, answer []byte) (out []byte, changed bool) {
	if !jsonsafe.Valid(answer) {
		return answer, false
	}
	root := gjson.ParseBytes(answer)
	if !root.IsObject() {
		return answer, false
	}
	root.Index = rootIndex(answer)
	var edits []Edit
	var err error
	// replace records new raw for the value v, when it changed.
	replace := func(v gjson.Result, raw []byte, ch bool, e error) {
		if e != nil && err == nil {
			err = e
		}
		if e != nil || !ch {
			return
		}
		if s, e := locate(answer, v); e == nil {
			edits = append(edits, Edit{Span: s, Raw: string(raw)})
		} else if err == nil {
			err = e
		}
	}
	setStop := func(v gjson.Result, from []string, to string) {
		if v.Type != gjson.String {
			return
		}
		for _, f := range from {
			if v.Str == f {
				replace(v, QuoteString(to), true, nil)
			}
		}
	}
	isExpand := func(v gjson.Result) bool { return v.Get("name").String() == ExpandToolName }
	switch d {
	case OpenAIChat:
		root.Get("choices").ForEach(func(_, ch gjson.Result) bool {
			msg := ch.Get("message")
			if !msg.IsObject() {
				return true
			}
			left := 0
			var inner error
			raw, changed, e := rewriteEntries(answer, msg, func(k, v gjson.Result) ([]byte, bool) {
				switch k.Str {
				case "tool_calls":
					if !v.IsArray() {
						return nil, true
					}
					calls, n, e := keepCount(answer, v, func(c gjson.Result) bool { return !isExpandToolCall(c) })
					if e != nil {
						inner = e
						return nil, true
					}
					left += n
					return calls, n > 0
				case "function_call":
					if v.IsObject() && isExpand(v) {
						return nil, false
					}
					if v.IsObject() {
						left++
					}
				}
				return nil, true
			})
			if e == nil {
				e = inner
			}
			replace(msg, raw, changed, e)
			if changed && e == nil && left == 0 {
				setStop(ch.Get("finish_reason"), []string{"tool_calls", "function_call"}, "stop")
			}
			return true
		})
	case Anthropic:
		content := root.Get("content")
		if !content.IsArray() {
			break
		}
		left := 0
		raw, changed, e := rewriteEntries(answer, content, func(_, b gjson.Result) ([]byte, bool) {
			if b.Get("type").String() != "tool_use" {
				return nil, true
			}
			if isExpand(b) {
				return nil, false
			}
			left++
			return nil, true
		})
		replace(content, raw, changed, e)
		if changed && e == nil && left == 0 {
			setStop(root.Get("stop_reason"), []string{"tool_use"}, "end_turn")
		}
	case Bedrock:
		content := root.Get("output.message.content")
		if !content.IsArray() {
			break
		}
		left := 0
		raw, changed, e := rewriteEntries(answer, content, func(_, b gjson.Result) ([]byte, bool) {
			tu := b.Get("toolUse")
			if !tu.Exists() {
				return nil, true
			}
			if isExpand(tu) {
				return nil, false
			}
			left++
			return nil, true
		})
		replace(content, raw, changed, e)
		if changed && e == nil && left == 0 {
			setStop(root.Get("stopReason"), []string{"tool_use"}, "end_turn")
		}
	case Gemini:
		root.Get("candidates").ForEach(func(_, c gjson.Result) bool {
			parts := c.Get("content.parts")
			if !parts.IsArray() {
				return true
			}
			raw, kept, changed, e := geminiKeepParts(answer, parts, false)
			if changed && kept == 0 {
				raw = []byte(`[{"text":""}]`)
			}
			replace(parts, raw, changed, e)
			return true
		})
	case OpenAIResponses:
		output := root.Get("output")
		if !output.IsArray() {
			break
		}
		raw, changed, e := rewriteEntries(answer, output, func(_, it gjson.Result) ([]byte, bool) {
			return nil, it.Get("type").String() != "function_call" || !isExpand(it)
		})
		replace(output, raw, changed, e)
	}
	if err != nil || len(edits) == 0 {
		return answer, false
	}
	out, err = Apply(answer, edits)
	if err != nil {
		return answer, false
	}
	return out, true
}
