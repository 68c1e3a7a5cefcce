package wire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// ExpandToolName is the injected tool's name.
const ExpandToolName = "expand_context"

// ErrToolsShape means the request's tools list (or Bedrock toolConfig) is
// present but not of the type its API defines, so there is nowhere safe to
// add a tool; the body is left as it was.
var ErrToolsShape = errors.New("tools list has an unexpected shape")

// The tool's wording and schema are fixed: the tools list is part of every
// provider's prompt-cache prefix, so the injected bytes must be the same on
// every request of every turn (Anthropic: docs.anthropic.com/en/docs/build-with-claude/prompt-caching, the prefix runs tools, system, messages; OpenAI caches exact prefixes too).
//
// They are also as short as a model still uses them correctly, because
// they ride on every request of every session, compressed or not: the
// shortened result itself says what to call and with which id (the hint
// line of shadow.Reference, the summaries' "returns it"), so the
// declaration only has to exist. Paging needs no parameters of its own: a
// part that is not the whole original names the id of the next part,
// "<id>@<line>" (ExpandArgs).
const expandDescription = "Full text of a shortened tool result, by its id."

var (
	quotedName  = string(QuoteString(ExpandToolName))
	quotedDesc  = string(QuoteString(expandDescription))
	nameAndDesc = `"name":` + quotedName + `,"description":` + quotedDesc
	// additionalProperties false with every property required is what
	// OpenAI's strict mode (the default for Responses function tools)
	// asks for, so the schema works whether or not strict is on.
	expandSchema = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`
	// Gemini's Schema is an OpenAPI subset without additionalProperties
	// (older API versions reject unknown schema fields).
	geminiSchema = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`
)

// The definitions, one per wire form.
var (
	expandToolOpenAIChat      = `{"type":"function","function":{` + nameAndDesc + `,"parameters":` + expandSchema + `}}`
	expandFunctionLegacy      = `{` + nameAndDesc + `,"parameters":` + expandSchema + `}`
	expandToolOpenAIResponses = `{"type":"function",` + nameAndDesc + `,"parameters":` + expandSchema + `}`
	expandToolAnthropic       = `{` + nameAndDesc + `,"input_schema":` + expandSchema + `}`
	expandDeclGemini          = `{` + nameAndDesc + `,"parameters":` + geminiSchema + `}`
	expandToolBedrock         = `{"toolSpec":{` + nameAndDesc + `,"inputSchema":{"json":` + expandSchema + `}}}`
)

// ExpandToolJSON returns the tool definition InjectExpandTool adds for d,
// in the form that goes into the tools list (for Gemini: one entry of
// functionDeclarations). It is "" for an unknown dialect.
func ExpandToolJSON(d Dialect) string {
	switch d {
	case OpenAIChat:
		return expandToolOpenAIChat
	case OpenAIResponses:
		return expandToolOpenAIResponses
	case Anthropic:
		return expandToolAnthropic
	case Gemini:
		return expandDeclGemini
	case Bedrock:
		return expandToolBedrock
	}
	return ""
}

// InjectExpandTool adds the expand_context tool definition to the request
// in dialect d, appended at the end of the existing tools list so that the
// earlier tools, and a provider's cached prefix up to them, stay
// byte-identical. It creates the list (the Bedrock toolConfig, a Gemini
// tools entry) when absent, and is a no-op (changed=false) when a tool
// named expand_context is already there. Every other byte is kept: the
// definition is spliced in at gjson offsets. On error body is returned
// unchanged.
//
// Where it goes:
//   - OpenAI Chat: tools[] (or, for a request that uses only the deprecated
//     functions[], that list in the legacy shape);
//   - Responses and Anthropic: tools[];
//   - Gemini: the last tools[] entry that has functionDeclarations (or
//     function_declarations); else a new {"functionDeclarations":[…]} entry
//     at the end of tools[];
//   - Bedrock: toolConfig.tools[].
//
// New keys ("tools", "toolConfig") are added as the last member of their
// object.
func InjectExpandTool(d Dialect, body []byte) (out []byte, changed bool, err error) {
	if !jsonsafe.Valid(body) {
		return body, false, ErrNotJSON
	}
	return InjectExpandToolValid(d, body)
}

// InjectExpandToolValid is InjectExpandTool for a body known to be valid
// JSON (one the request pipeline parsed, or spliced from one): the body is
// not checked again, its top level is read once, and the tool is spliced in
// with one copy. The inserted text is a constant of this file, so the
// output is valid whenever the body was.
func InjectExpandToolValid(d Dialect, body []byte) (out []byte, changed bool, err error) {
	return injectExpandTool(d, body, rootNode(body), nil)
}

// InjectExpandTool is the package function for out, a body spliced from
// the conversation's (or the conversation's own): when no edit changed it,
// the top level read by the parse is used as it is.
func (c *Conversation) InjectExpandTool(out []byte) ([]byte, bool, error) {
	if len(out) == len(c.Body) && len(out) > 0 && &out[0] == &c.Body[0] {
		return injectExpandTool(c.Dialect, out, c.root, c.top())
	}
	return InjectExpandToolValid(c.Dialect, out)
}

// ExpandToolEdit is the edit of the conversation's own body (c.Body, as
// parsed) that adds the expand_context tool: what InjectExpandTool would
// splice, for a caller that splices it with the filters' edits in one copy
// (they only ever replace message content, never the tools list). changed
// is false when the tool is declared already.
func (c *Conversation) ExpandToolEdit() (e Edit, changed bool, err error) {
	e, changed, err = expandToolEdit(c.Dialect, c.Body, c.root, c.top())
	// What injectExpandTool splices unchecked: a constant tool inserted
	// where the parse says the list or the object ends.
	e.spliced = changed && err == nil
	return e, changed, err
}

func injectExpandTool(d Dialect, body []byte, top node, get func(string) gjson.Result) (out []byte, changed bool, err error) {
	e, changed, err := expandToolEdit(d, body, top, get)
	if err != nil || !changed {
		return body, false, err
	}
	return splice(body, e), true, nil
}

func expandToolEdit(d Dialect, body []byte, top node, get func(string) gjson.Result) (e Edit, changed bool, err error) {
	if !d.Valid() {
		return Edit{}, false, fmt.Errorf("inject %s: unknown dialect %q", ExpandToolName, d)
	}
	if !top.IsObject() {
		return Edit{}, false, ErrNotJSON
	}
	root := gjson.Result{Type: gjson.JSON, Raw: top.Raw, Index: top.Index}
	if get == nil {
		get = topGetter(top)
	}
	if hasExpandTool(d, get) {
		return Edit{}, false, nil
	}
	switch d {
	case OpenAIChat:
		tools, fns := get("tools"), get("functions")
		if !tools.Exists() && fns.IsArray() {
			e, err = addToList(body, root, get, "functions", expandFunctionLegacy)
		} else {
			e, err = addToList(body, root, get, "tools", expandToolOpenAIChat)
		}
	case OpenAIResponses:
		e, err = addToList(body, root, get, "tools", expandToolOpenAIResponses)
	case Anthropic:
		e, err = addToList(body, root, get, "tools", expandToolAnthropic)
	case Gemini:
		e, err = injectGemini(body, root, get)
	case Bedrock:
		tc := get("toolConfig")
		switch {
		case !tc.Exists() || tc.Type == gjson.Null:
			e, err = setMember(body, root, get, "toolConfig", `{"tools":[`+expandToolBedrock+`]}`)
		case tc.IsObject():
			e, err = addToList(body, tc, tc.Get, "tools", expandToolBedrock)
		default:
			err = ErrToolsShape
		}
	}
	if err != nil {
		return Edit{}, false, fmt.Errorf("inject %s: %w", ExpandToolName, err)
	}
	return e, true, nil
}

// topGetter reads an object's members once and answers gjson paths from
// them: the first key from the index, the rest from that member's value.
// gjson would scan the whole top level (messages and all) for every path.
func topGetter(obj node) func(path string) gjson.Result {
	if !obj.IsObject() {
		return func(string) gjson.Result { return gjson.Result{} }
	}
	if obj.members == nil {
		obj = indexed(obj)
	}
	return func(path string) gjson.Result {
		first, rest, _ := strings.Cut(path, ".")
		v := toResult(obj.member(first))
		if rest == "" || !v.Exists() {
			return v
		}
		return v.Get(rest)
	}
}

// toResult is a node as gjson would have returned it.
func toResult(v node) gjson.Result {
	r := gjson.Result{Type: v.Type, Raw: v.Raw, Index: v.Index}
	switch v.Type {
	case gjson.String:
		r.Str = v.String()
	case gjson.Number:
		r.Num, _ = strconv.ParseFloat(v.Raw, 64)
	}
	return r
}

// splice applies one edit without checking the result; callers vouch for
// it.
func splice(body []byte, e Edit) []byte {
	out := make([]byte, 0, len(body)+len(e.Raw)-(e.Span.End-e.Span.Start))
	out = append(out, body[:e.Span.Start]...)
	out = append(out, e.Raw...)
	return append(out, body[e.Span.End:]...)
}

// injectGemini adds the declaration to the last tools entry that already
// declares functions: Gemini models have limits on how many tool entries
// (and which mixes of built-in and function tools) one request may carry,
// so joining an existing declaration list is the least surprising place.
func injectGemini(body []byte, root gjson.Result, get func(string) gjson.Result) (Edit, error) {
	tools := get("tools")
	if !tools.IsArray() {
		return addToList(body, root, get, "tools", `{"functionDeclarations":[`+expandDeclGemini+`]}`)
	}
	var decls gjson.Result
	tools.ForEach(func(_, entry gjson.Result) bool {
		for _, k := range []string{"functionDeclarations", "function_declarations"} {
			if v := entry.Get(k); v.IsArray() {
				decls = v
				break
			}
		}
		return true
	})
	if decls.Exists() {
		return insertAt(body, decls, expandDeclGemini)
	}
	return insertAt(body, tools, `{"functionDeclarations":[`+expandDeclGemini+`]}`)
}

// hasExpandTool reports whether the request already offers a tool named
// expand_context, in any of the places a tool name can sit for d.
func hasExpandTool(d Dialect, get func(string) gjson.Result) bool {
	found := false
	check := func(list gjson.Result, paths ...string) {
		list.ForEach(func(_, t gjson.Result) bool {
			for _, p := range paths {
				if n := t.Get(p); n.Type == gjson.String && n.Str == ExpandToolName {
					found = true
					return false
				}
			}
			return true
		})
	}
	switch d {
	case OpenAIChat:
		check(get("tools"), "function.name", "custom.name", "name")
		check(get("functions"), "name")
	case OpenAIResponses, Anthropic:
		check(get("tools"), "name")
	case Gemini:
		get("tools").ForEach(func(_, entry gjson.Result) bool {
			check(entry.Get("functionDeclarations"), "name")
			check(entry.Get("function_declarations"), "name")
			return !found
		})
	case Bedrock:
		check(get("toolConfig.tools"), "toolSpec.name")
	}
	return found
}

// addToList is the edit that appends elem to the array obj[key] (get reads
// obj's members), creating the array as the last member of obj when the
// key is missing or null.
func addToList(body []byte, obj gjson.Result, get func(string) gjson.Result, key, elem string) (Edit, error) {
	list := get(key)
	switch {
	case !list.Exists() || list.Type == gjson.Null:
		return setMember(body, obj, get, key, "["+elem+"]")
	case list.IsArray():
		return insertAt(body, list, elem)
	}
	return Edit{}, fmt.Errorf("%w: %s is %s", ErrToolsShape, key, list.Type)
}

// setMember is the edit that sets obj[key] = raw: a null value is replaced
// in place, a missing key is added after the last member.
func setMember(body []byte, obj gjson.Result, get func(string) gjson.Result, key, raw string) (Edit, error) {
	if v := get(key); v.Exists() {
		if v.Type != gjson.Null {
			return Edit{}, fmt.Errorf("%w: %s is %s", ErrToolsShape, key, v.Type)
		}
		s, err := locate(body, v)
		if err != nil {
			return Edit{}, err
		}
		return Edit{Span: s, Raw: raw}, nil
	}
	return insertAt(body, obj, string(QuoteString(key))+":"+raw)
}

// appendElem inserts elem as the last element of the array arr.
func appendElem(body []byte, arr gjson.Result, elem string) ([]byte, error) {
	return insertBeforeClose(body, arr, elem)
}

// insertBeforeClose inserts raw right before the closing bracket of the
// object or array v, with a comma when v is not empty. Nothing before the
// bracket moves.
func insertBeforeClose(body []byte, v gjson.Result, raw string) ([]byte, error) {
	e, err := insertAt(body, v, raw)
	if err != nil {
		return nil, err
	}
	return Apply(body, []Edit{e})
}

// insertAt is insertBeforeClose's edit.
func insertAt(body []byte, v gjson.Result, raw string) (Edit, error) {
	s, err := locate(body, v)
	if err != nil {
		return Edit{}, err
	}
	// A root value's Raw runs to the end of the body, trailing space
	// included; the bracket is the last non-space byte.
	end := s.End - 1
	for end > s.Start && isSpace(body[end]) {
		end--
	}
	// Empty when the first byte after the opening bracket that is not
	// space is the closing one (the value is valid JSON).
	first := s.Start + 1
	for first < end && isSpace(body[first]) {
		first++
	}
	if first < end {
		raw = "," + raw
	}
	return Edit{Span: Span{Start: end, End: end}, Raw: raw}, nil
}

// locate returns v's span in body, refusing to guess: gjson leaves Index 0
// for values it computed rather than found, so the bytes must match.
func locate(body []byte, v gjson.Result) (Span, error) {
	s := gjsonSpan(v)
	if v.Raw == "" || s.Start < 0 || s.End > len(body) || string(body[s.Start:s.End]) != v.Raw {
		return Span{}, fmt.Errorf("%w: cannot locate value in body", ErrBadEdit)
	}
	return s, nil
}

// rootIndex is where the top-level value starts (after leading space), so
// that children found from the root carry absolute offsets.
func rootIndex(body []byte) int {
	for i, b := range body {
		if !isSpace(b) {
			return i
		}
	}
	return 0
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// ExpandCall is one expand_context call found in a model answer.
type ExpandCall struct {
	CallID string // the call's id (Gemini without ids: the tool name; legacy OpenAI function_call: the name)
	ID     string // the shadow id argument; "" when the arguments are malformed
	Index  int    // position among the answer's tool calls
	// Offset (first line, from 1) and Limit (lines) page through an
	// original too long for the context; 0 when not given.
	Offset, Limit int
}

// FindExpandCalls lists the expand_context calls in a complete
// (non-streaming) answer body of dialect d, and reports how many tool calls
// the answer makes in all, so callers can tell whether the model asked only
// for expansions. Where calls are read (each provider's API reference):
//   - OpenAI Chat: choices[0].message.tool_calls[] (function and custom),
//     then the legacy message.function_call;
//   - Anthropic: content[] blocks of type tool_use (server_tool_use blocks
//     run at the provider and are not counted);
//   - Responses: output[] items a client must answer: function_call and the
//     other *_call items carrying a call_id, and mcp_approval_request
//     (server-run web_search_call, mcp_call, … are not counted);
//   - Gemini: candidates[0].content.parts[] functionCall / function_call;
//   - Bedrock Converse: output.message.content[] toolUse.
func FindExpandCalls(d Dialect, answer []byte) (calls []ExpandCall, totalCalls int, err error) {
	if !d.Valid() {
		return nil, 0, fmt.Errorf("find %s calls: unknown dialect %q", ExpandToolName, d)
	}
	if !jsonsafe.Valid(answer) {
		return nil, 0, ErrNotJSON
	}
	root := gjson.ParseBytes(answer)
	if !root.IsObject() {
		return nil, 0, ErrNotJSON
	}
	seen := func(callID, name string, args gjson.Result) {
		if name == ExpandToolName {
			calls = append(calls, NewExpandCall(callID, args, totalCalls))
		}
		totalCalls++
	}
	switch d {
	case OpenAIChat:
		msg := root.Get("choices.0.message")
		msg.Get("tool_calls").ForEach(func(_, c gjson.Result) bool {
			if f := c.Get("function"); f.Exists() {
				seen(c.Get("id").String(), f.Get("name").String(), f.Get("arguments"))
			} else {
				seen(c.Get("id").String(), c.Get("custom.name").String(), c.Get("custom.input"))
			}
			return true
		})
		if fc := msg.Get("function_call"); fc.IsObject() {
			name := fc.Get("name").String()
			seen(name, name, fc.Get("arguments"))
		}
	case Anthropic:
		root.Get("content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").String() == "tool_use" {
				seen(b.Get("id").String(), b.Get("name").String(), b.Get("input"))
			}
			return true
		})
	case OpenAIResponses:
		root.Get("output").ForEach(func(_, it gjson.Result) bool {
			typ := it.Get("type").String()
			switch {
			case typ == "function_call":
				seen(it.Get("call_id").String(), it.Get("name").String(), it.Get("arguments"))
			case typ == "mcp_approval_request":
				seen(it.Get("id").String(), "", gjson.Result{})
			case strings.HasSuffix(typ, "_call") && it.Get("call_id").Exists():
				seen(it.Get("call_id").String(), "", gjson.Result{})
			}
			return true
		})
	case Gemini:
		root.Get("candidates.0.content.parts").ForEach(func(_, p gjson.Result) bool {
			fc := p.Get("functionCall")
			if !fc.Exists() {
				fc = p.Get("function_call")
			}
			if fc.IsObject() {
				name := fc.Get("name").String()
				id := fc.Get("id").String()
				if id == "" {
					id = name
				}
				seen(id, name, fc.Get("args"))
			}
			return true
		})
	case Bedrock:
		root.Get("output.message.content").ForEach(func(_, b gjson.Result) bool {
			if tu := b.Get("toolUse"); tu.IsObject() {
				seen(tu.Get("toolUseId").String(), tu.Get("name").String(), tu.Get("input"))
			}
			return true
		})
	}
	return calls, totalCalls, nil
}

// ExpandArg reads the id argument of an expand_context call; see ExpandArgs.
func ExpandArg(args gjson.Result) string {
	id, _, _ := ExpandArgs(args)
	return id
}

// ExpandArgs reads an expand_context call's arguments, either an object
// (Anthropic, Gemini, Bedrock) or a string holding a JSON object (OpenAI
// Chat and Responses): the id ("" when malformed) and the paging window
// (0 when absent, null or not a positive integer). The first line of a
// part comes as the id's "@<line>" suffix (what a part names as the next
// one), or as an "offset" argument (the declaration of earlier versions,
// still in conversations' history).
func ExpandArgs(args gjson.Result) (id string, offset, limit int) {
	if args.Type == gjson.String {
		if !jsonsafe.ValidString(args.Str) {
			return "", 0, 0
		}
		args = gjson.Parse(args.Str)
	}
	if !args.IsObject() {
		return "", 0, 0
	}
	if v := args.Get("id"); v.Type == gjson.String {
		id = v.Str
	}
	positive := func(v gjson.Result) int {
		if v.Type != gjson.Number || v.Num < 1 || v.Num > 1<<31 {
			return 0
		}
		return int(v.Num)
	}
	offset, limit = positive(args.Get("offset")), positive(args.Get("limit"))
	if base, line, ok := strings.Cut(id, PageSep); ok {
		id = base
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= 1<<31 {
			offset = n
		}
	}
	return id, offset, limit
}

// PageSep separates an original's id from the first line of the part an
// expand_context call asks for: "sh_…@120".
const PageSep = "@"

// NewExpandCall is the ExpandCall for a call with these arguments.
func NewExpandCall(callID string, args gjson.Result, index int) ExpandCall {
	id, offset, limit := ExpandArgs(args)
	return ExpandCall{CallID: callID, ID: id, Index: index, Offset: offset, Limit: limit}
}
