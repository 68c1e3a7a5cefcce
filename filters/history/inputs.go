package history

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
)

// keptValue is an original a summary points to: it goes to the store under
// its shadow id before the request leaves.
type keptValue struct {
	id    string
	value string
	// block, when set, holds the value instead: decoded only if the store
	// does not have it already (keep touches what it has).
	block *wire.TextBlock
}

// bytes is the value to put, and whether the store may keep it as it is
// (a decoded text of its own, wire.TextBlock.OwnsText; a value is a view
// of the body or of a decoded argument, and is copied).
func (v keptValue) bytes() ([]byte, bool) {
	if v.block != nil {
		text := v.block.Text()
		return shadow.ReadOnlyBytes(text), v.block.OwnsText()
	}
	return shadow.ReadOnlyBytes(v.value), false
}

// inputRewrite is the rewrite of one old call's arguments.
type inputRewrite struct {
	edits []wire.Edit
	kept  []keptValue
	saved int // bytes the edits take out of the body
}

// summarizeInput shortens an old call's arguments: every top-level string
// longer than minBytes (a Write's file body, an Edit's old and new text, a
// patch, a heredoc command) becomes one line saying what it held. The
// arguments keep their form and every other member byte for byte: an object
// stays the same object, OpenAI's JSON-string arguments stay a string that
// holds a JSON object, a free-form input (Responses custom tools) stays a
// string.
func summarizeInput(call *wire.ToolCall, minBytes int, ref func(value string) (id, hint string)) inputRewrite {
	var rw inputRewrite
	raw := call.Args
	if len(raw) <= minBytes || call.ArgsSpan.End-call.ArgsSpan.Start != len(raw) {
		return rw
	}
	v := gjson.Parse(raw)
	switch {
	case v.IsObject():
		for _, m := range longMembers(v, minBytes) {
			line, keep := fieldSummary(m.key, m.val.Str, ref)
			rw.kept = append(rw.kept, keep)
			at := wire.Span{Start: call.ArgsSpan.Start + m.val.Index, End: call.ArgsSpan.Start + m.val.Index + len(m.val.Raw)}
			e := wire.SetString(at, line)
			rw.edits = append(rw.edits, e)
			rw.saved += len(m.val.Raw) - len(e.Raw)
		}
	case v.Type == gjson.String:
		inner := v.String()
		obj := gjson.Result{}
		if jsonsafe.ValidString(inner) {
			obj = gjson.Parse(inner)
		}
		var out string
		if obj.IsObject() {
			members := longMembers(obj, minBytes)
			if len(members) == 0 {
				return rw
			}
			var b strings.Builder
			prev := 0
			for _, m := range members {
				line, keep := fieldSummary(m.key, m.val.Str, ref)
				rw.kept = append(rw.kept, keep)
				b.WriteString(inner[prev:m.val.Index])
				b.Write(wire.QuoteString(line))
				prev = m.val.Index + len(m.val.Raw)
			}
			b.WriteString(inner[prev:])
			out = b.String()
			if !jsonsafe.ValidString(out) {
				return inputRewrite{}
			}
		} else {
			if len(inner) <= minBytes {
				return rw
			}
			line, keep := fieldSummary("input", inner, ref)
			rw.kept = append(rw.kept, keep)
			out = line
		}
		e := wire.SetString(call.ArgsSpan, out)
		rw.edits = append(rw.edits, e)
		rw.saved = len(raw) - len(e.Raw)
	}
	if rw.saved <= 0 {
		return inputRewrite{}
	}
	return rw
}

type member struct {
	key string
	val gjson.Result
}

// longMembers lists the top-level string members over minBytes, in order.
// Their Index is relative to the object's raw text.
func longMembers(obj gjson.Result, minBytes int) []member {
	var out []member
	obj.ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.String && len(v.Raw) > minBytes && v.Index > 0 {
			out = append(out, member{key: k.String(), val: v})
		}
		return true
	})
	return out
}

// fieldSummary is the line that replaces one long argument: its name, its
// size, and for a patch or a diff the files it touched with their added and
// removed line counts.
func fieldSummary(key, value string, ref func(string) (string, string)) (string, keptValue) {
	id, hint := ref(value)
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteString(quoteShort(key))
	b.WriteString(" of ")
	b.WriteString(plural(clamp.CountLines(value), "line"))
	b.WriteString(", ")
	b.WriteString(plural(len(value), "byte"))
	if files := patchFiles(value); files != "" {
		b.WriteString(": ")
		b.WriteString(files)
	}
	b.WriteString(hint)
	b.WriteString("]")
	return b.String(), keptValue{id: id, value: value}
}

// maxPatchFiles bounds how many files a patch summary names.
const maxPatchFiles = 8

// patchFiles summarises a unified diff or an apply_patch envelope as
// "src/a.go +12 -3, src/b.go +40 -0"; "" when value is neither.
func patchFiles(value string) string {
	type file struct {
		name     string
		add, del int
		verb     string
	}
	var files []file
	cur := -1
	for rest := value; rest != ""; {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		switch {
		case strings.HasPrefix(l, "*** Update File: "), strings.HasPrefix(l, "*** Add File: "), strings.HasPrefix(l, "*** Delete File: "):
			verb, name, _ := strings.Cut(strings.TrimPrefix(l, "*** "), " File: ")
			files = append(files, file{name: name, verb: strings.ToLower(verb) + " "})
			cur = len(files) - 1
		case strings.HasPrefix(l, "diff --git "):
			name := l[len("diff --git "):]
			if i := strings.LastIndex(name, " b/"); i >= 0 {
				name = name[i+3:]
			}
			files = append(files, file{name: name})
			cur = len(files) - 1
		case strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "--- "):
			// file headers of a diff, not changed lines
		case cur >= 0 && strings.HasPrefix(l, "+"):
			files[cur].add++
		case cur >= 0 && strings.HasPrefix(l, "-"):
			files[cur].del++
		}
	}
	if len(files) == 0 {
		return ""
	}
	var parts []string
	for i, f := range files {
		if i == maxPatchFiles {
			parts = append(parts, "+"+thousands(len(files)-i)+" more files")
			break
		}
		parts = append(parts, f.verb+quoteShort(f.name)+" +"+thousands(f.add)+" -"+thousands(f.del))
	}
	return strings.Join(parts, ", ")
}
