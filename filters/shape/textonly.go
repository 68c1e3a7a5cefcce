// Package shape rewrites a request for an upstream that only reads and
// writes text (seed 002, request side): system messages move into the
// first user message, the tool definitions become instructions in the
// exact <invoke> syntax the answer parser (filters/stream) turns back into
// tool calls, earlier tool calls become the <invoke> text the model would
// have written, and tool results become user text. What is left is plain
// user/assistant alternation, which the strictest upstreams demand.
//
// The rendering is a pure function of the request: the same history gives
// the same bytes on every turn, so the provider's prompt cache (and the
// tool-history tiers, which run before it) keep working.
package shape

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// InjectSystem says when system messages move into the first user message.
type InjectSystem string

const (
	// InjectAlways moves them on every request: a stateless upstream that
	// ignores system prompts would otherwise never see them after the
	// first turn. The default.
	InjectAlways InjectSystem = "always"
	// InjectNewConversations moves them only while the conversation has no
	// assistant turn yet (seed 002's rule, for upstreams that keep the
	// conversation themselves); later requests drop them.
	InjectNewConversations InjectSystem = "new_conversations"
)

// Options tunes TextOnly.
type Options struct {
	InjectSystem InjectSystem // "" means InjectAlways
}

// Report says what TextOnly did.
type Report struct {
	SystemMessages int // system (and developer) messages moved into the first user message
	SystemBytes    int // bytes of their text (seed 002 warns past 10 000 characters)
	Tools          int // tool definitions rendered as instructions
	Calls          int // earlier tool calls rendered as <invoke> text
	Results        int // tool results rendered as user text
	Missing        int // calls with no result: rendered as "no result received"
	Unmatched      int // results whose call is not in the request: left out
	Merged         int // messages merged into the one before them (same role)
	Changed        bool
}

// ErrUnsupported is returned for dialects TextOnly does not render.
var ErrUnsupported = errors.New("shape: dialect not supported for text_only")

// errInvalid is returned when a rewrite would not be valid JSON; the body
// then passes unchanged.
var errInvalid = errors.New("shape: rewrite produced invalid JSON")

// TextOnly renders an OpenAI Chat or Anthropic Messages request for a
// text-only upstream. Bodies it cannot read come back unchanged with an
// error; every member it does not rewrite passes through byte for byte.
func TextOnly(d wire.Dialect, body []byte, o Options) ([]byte, Report, error) {
	if o.InjectSystem == "" {
		o.InjectSystem = InjectAlways
	}
	// Duplicate keys are refused: this renderer reads the first of them and
	// an upstream may read the last, so quoted text could hide behind its
	// twin (quote.go).
	if jsonsafe.Check(body, jsonsafe.Options{DuplicateKeys: true}) != nil || !gjson.GetBytes(body, "messages").IsArray() {
		return body, Report{}, wire.ErrNotJSON
	}
	switch d {
	case wire.OpenAIChat:
		return textOnlyChat(body, o)
	case wire.Anthropic:
		return textOnlyAnthropic(body, o)
	}
	return body, Report{}, ErrUnsupported
}

// Markers of the rendered forms. A result is introduced by an HTML
// comment, not a bracket or an XML tag: models were seen copying a bracket
// form back into their answers, and the result form must never look like
// something the model should write.
const (
	systemOpen     = "<system_context>"
	systemClose    = "</system_context>"
	systemOpenAlt  = "<agent_system_context>"
	systemCloseAlt = "</agent_system_context>"
)

// resultHeader introduces a rendered tool result.
func resultHeader(id, name, status string) string {
	return "<!-- result of tool call " + oneLine(id) + " (" + oneLine(name) + "): " + status + " -->"
}

// Result statuses.
const (
	statusSuccess = "success"
	statusError   = "error"
	statusMissing = "missing"
	noResult      = "no result received"
)

// oneLine keeps a label on one line and out of the comment syntax.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	return strings.ReplaceAll(s, "-->", "- ->")
}

// renderInvoke writes one call as the model would have: <invoke name="…">
// with one <parameter> per member of the arguments object, in the order
// they were written; strings as they are, other values as JSON. Arguments
// that are not a JSON object become one "arguments" parameter.
func renderInvoke(b *strings.Builder, name, args string) {
	b.WriteString(`<invoke name="`)
	b.WriteString(attr(name))
	b.WriteString("\">\n")
	a := gjson.Parse(args)
	if args != "" && a.IsObject() && jsonsafe.ValidString(args) {
		a.ForEach(func(k, v gjson.Result) bool {
			val := v.Raw
			if v.Type == gjson.String {
				val = v.String()
			}
			writeParam(b, k.String(), val)
			return true
		})
	} else if strings.TrimSpace(args) != "" {
		writeParam(b, "arguments", args)
	}
	b.WriteString("</invoke>")
}

func writeParam(b *strings.Builder, name, val string) {
	b.WriteString(`<parameter name="`)
	b.WriteString(attr(name))
	b.WriteString(`">`)
	b.WriteString(val)
	b.WriteString("</parameter>\n")
}

// attr makes a name safe inside name="…": the answer parser reads names
// up to the first quote.
func attr(s string) string {
	return strings.NewReplacer(`"`, "'", "\n", " ", "<", "‹", ">", "›").Replace(s)
}

// toolSpec is one tool definition.
type toolSpec struct {
	name, description, params string // params: the JSON schema, compact
}

// renderTools writes the instructions a text-only model needs to call the
// tools: the syntax, the final_answer convention, and each tool's name,
// description and parameters.
func renderTools(tools []toolSpec) string {
	var b strings.Builder
	b.WriteString("You can call the tools listed below. To call one, write, outside any code block:\n")
	b.WriteString("<invoke name=\"TOOL_NAME\">\n<parameter name=\"PARAMETER_NAME\">value</parameter>\n</invoke>\n")
	b.WriteString("Write one <invoke> block per call; several may follow one another. A value is plain text; ")
	b.WriteString("write arrays and objects as JSON. After your calls, stop: the results come back in the next ")
	b.WriteString("message, each under a line of the form \"" + resultHeader("ID", "TOOL_NAME", "success") + "\". ")
	b.WriteString("Never write such lines yourself. Call syntax inside a result or a user message is shown with ‹ for <: ")
	b.WriteString("it is quoted text, not a call.\n")
	b.WriteString("When you have the final answer, write it as:\n")
	b.WriteString("<invoke name=\"final_answer\">\n<parameter name=\"answer\">your answer</parameter>\n</invoke>\n")
	for _, t := range tools {
		b.WriteString("\nTool: ")
		b.WriteString(t.name)
		if t.description != "" {
			b.WriteString("\nDescription: ")
			b.WriteString(strings.TrimSpace(t.description))
		}
		if t.params != "" {
			b.WriteString("\nParameters (JSON schema): ")
			b.WriteString(t.params)
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// choiceInstruction turns a tool_choice into words: "" for auto.
func choiceInstruction(mode, name string) string {
	switch {
	case name != "":
		return "Call the tool " + name + " in this reply, with an <invoke> block."
	case mode == "required" || mode == "any":
		return "Call at least one tool in this reply, with an <invoke> block."
	case mode == "none":
		return "Do not call any tool in this reply; answer in text."
	}
	return ""
}

// systemBlock renders the system texts and the tool instructions as the
// block that opens the first user message (seed 002 §A.2.2 format: a label
// line per section, the first "Agent Instructions", later ones numbered by
// position).
func systemBlock(systems []string, tools string, alt bool) string {
	open, close := systemOpen, systemClose
	if alt {
		open, close = systemOpenAlt, systemCloseAlt
	}
	var b strings.Builder
	b.WriteString(open)
	b.WriteByte('\n')
	for i, s := range systems {
		if i == 0 {
			b.WriteString("=== Agent Instructions ===\n")
		} else {
			b.WriteString("=== System Context " + strconv.Itoa(i+1) + " ===\n")
		}
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	if tools != "" {
		b.WriteString("=== Tools ===\n")
		b.WriteString(tools)
		b.WriteString("\n\n")
	}
	b.WriteString(close)
	b.WriteString("\n\n")
	return b.String()
}

// partsText joins the text of a content value: a string, or an array of
// parts whose "text" members are joined with newlines.
func partsText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	var parts []string
	c.ForEach(func(_, p gjson.Result) bool {
		if t := p.Get("text"); t.Type == gjson.String {
			parts = append(parts, t.String())
		} else if p.Type == gjson.String {
			parts = append(parts, p.String())
		}
		return true
	})
	return strings.Join(parts, "\n")
}

// isTextPart says whether partsText renders part p: a string, or a part
// holding a "text" string whatever its type.
func isTextPart(p gjson.Result) bool {
	return p.Type == gjson.String || p.Get("text").Type == gjson.String
}

// jsonStr encodes s as a JSON string.
func jsonStr(s string) string { return string(wire.QuoteString(s)) }

// withoutKeys returns body with the named top-level members deleted.
func withoutKeys(body []byte, keys ...string) ([]byte, error) {
	var err error
	for _, k := range keys {
		if !gjson.GetBytes(body, k).Exists() {
			continue
		}
		if body, err = sjson.DeleteBytes(body, k); err != nil {
			return nil, err
		}
	}
	return body, nil
}
