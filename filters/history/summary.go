package history

import (
	"crypto/sha256"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
)

// Limits on what a summary quotes from a call, so a summary stays one line.
const (
	maxQuoted     = 160 // command lines, patterns, paths
	maxErrorLines = compress.MaxKeyLines
	// errorFallbackLines: an error result with no line that looks like an
	// error keeps its first lines, which are then the message.
	errorFallbackLines = 3
)

// Prefix starts every line this package writes into a result or a call
// input. It says "this is an old exchange, shortened": a model reading it
// knows the content is gone from view and how to get it back.
const Prefix = "[Earlier: "

// notKeptHint ends a summary whose original was not kept (the request
// could not get references): the model, and whoever reads the request,
// must know the rest is gone for good.
const notKeptHint = "; original not kept, cannot be expanded"

// NotKeptMarker starts a middle-tier result whose original was not kept.
const NotKeptMarker = "[toolproc: shortened; the original was not kept and cannot be expanded]\n"

// expandHint is the reference a summary carries when the original was kept:
// the expand tool's call, ready to copy.
func expandHint(tool, id string) string {
	if id == "" {
		return ""
	}
	return "; " + tool + ` {"id":"` + id + `"} returns it`
}

// exchange is what a summary is built from: one result (or one text block
// of it) with the call that asked for it.
type exchange struct {
	category Category
	tool     string
	args     gjson.Result // the call's arguments as an object (may not exist)
	isError  bool
	// text is the result's text, read only when a summary needs more than
	// what textLen, lines and the key lines' cache (by sum) already say:
	// an old result seen before is summarised without decoding it.
	text    func() string
	textLen int
	lines   int
	// sum is the text's shadow.Fingerprint (nil when the text is not what
	// was kept): the key lines' cache is keyed by it instead of hashing
	// the text again.
	sum *[sha256.Size]byte
}

// setText sets ex's text to a decoded string.
func (ex *exchange) setText(text string) {
	ex.text = func() string { return text }
	ex.textLen, ex.lines = len(text), clamp.CountLines(text)
}

// summarizeResult returns the summary of one old result: a first line
// saying what the call did and what came back, then, for failed commands
// and errors, the output's key lines verbatim. hint is expandHint's output.
func summarizeResult(ex exchange, hint string) string {
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteString(describe(ex))
	var key []string
	more := 0
	failed := ex.isError
	var fs facts
	switch ex.category {
	case Terminal, Other:
		fs = cachedFacts(ex.text, ex.textLen, true, ex.sum)
		key, more = fs.key, fs.more
		failed = failed || fs.failed
	default:
		if ex.isError {
			fs = cachedFacts(ex.text, ex.textLen, false, ex.sum)
			key, more = fs.key, fs.more
		} else {
			fs.lines = ex.lines
		}
	}
	lines := fs.lines
	if ex.isError && len(key) == 0 {
		key = firstLines(ex.text(), errorFallbackLines)
	}
	b.WriteString(" — ")
	if failed {
		if ex.isError {
			b.WriteString("ERROR, ")
		} else {
			b.WriteString("FAILED, ")
		}
	}
	b.WriteString(plural(lines, "line"))
	b.WriteString(", ")
	b.WriteString(plural(ex.textLen, "byte"))
	if len(key) > 0 {
		b.WriteString("; key lines verbatim below")
		if more > 0 {
			b.WriteString(" (" + strconv.Itoa(more) + " more in the original)")
		}
	}
	b.WriteString(hint)
	b.WriteString("]")
	for _, l := range key {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	return b.String()
}

// describe says what the call did, from its name and arguments:
// "Read src/a.py lines 10-40", "Ran `pytest -x`", "Searched \"foo\" in src".
func describe(ex exchange) string {
	a := ex.args
	switch ex.category {
	case Read:
		if p := firstString(a, "file_path", "path", "filePath", "target_file", "file", "filename", "url"); p != "" {
			return "Read " + quoteShort(p) + lineRange(a)
		}
		if c := firstString(a, "command"); c != "" { // SWE-agent: "open chall.py"
			return "Ran `" + quoteShort(firstLine(c)) + "`"
		}
	case Write:
		verb := "Edited "
		if a.Get("file_text").Exists() || a.Get("content").Exists() && !a.Get("old_string").Exists() ||
			a.Get("command").String() == "create" || ex.tool == "create_file" || ex.tool == "Write" || ex.tool == "write_to_file" {
			verb = "Wrote "
		}
		if p := firstString(a, "file_path", "path", "filePath", "target_file", "file", "filename"); p != "" {
			return verb + quoteShort(p)
		}
		if c := firstString(a, "command"); c != "" {
			return "Ran `" + quoteShort(firstLine(c)) + "`"
		}
		return verb + "files with " + quoteShort(ex.tool)
	case Terminal:
		if c := compress.CommandLine(a); c != "" {
			return "Ran `" + quoteShort(firstLine(c)) + "`"
		}
	case Search:
		if q := firstString(a, "pattern", "query", "regex", "glob", "search", "file_name", "symbolName", "command"); q != "" {
			s := "Searched " + strconv.Quote(quoteShort(firstLine(q)))
			if p := firstString(a, "path", "dir", "directory", "include", "file"); p != "" {
				s += " in " + quoteShort(p)
			}
			return s
		}
	}
	name := ex.tool
	if name == "" {
		name = "a tool"
	}
	if s := firstShortString(a); s != "" {
		return "Called " + quoteShort(name) + " (" + quoteShort(firstLine(s)) + ")"
	}
	return "Called " + quoteShort(name)
}

// lineRange reads the line range a read asked for: view_range [a, b]
// (Anthropic's text editor), offset/limit (Claude Code's Read),
// startLine/endLine (Copilot), line_number (SWE-agent's open).
func lineRange(a gjson.Result) string {
	if r := a.Get("view_range"); r.IsArray() {
		v := r.Array()
		if len(v) == 2 {
			return " lines " + v[0].Raw + "-" + v[1].Raw
		}
	}
	start, end := a.Get("startLine"), a.Get("endLine")
	if !start.Exists() {
		start, end = a.Get("start_line"), a.Get("end_line")
	}
	if start.Type == gjson.Number && end.Type == gjson.Number {
		return " lines " + start.Raw + "-" + end.Raw
	}
	if off, lim := a.Get("offset"), a.Get("limit"); off.Type == gjson.Number && lim.Type == gjson.Number {
		first := off.Int()
		if first < 1 {
			first = 1
		}
		return " lines " + strconv.FormatInt(first, 10) + "-" + strconv.FormatInt(first+lim.Int()-1, 10)
	}
	if n := a.Get("line_number"); n.Type == gjson.Number {
		return " at line " + n.Raw
	}
	return ""
}

func firstString(a gjson.Result, keys ...string) string {
	if !a.IsObject() {
		return ""
	}
	for _, k := range keys {
		if v := a.Get(k); v.Type == gjson.String && strings.TrimSpace(v.Str) != "" {
			return v.Str
		}
	}
	return ""
}

// firstShortString is the first string argument short enough to name the
// call by (an unknown tool's query, id or title).
func firstShortString(a gjson.Result) string {
	out := ""
	if !a.IsObject() {
		return ""
	}
	a.ForEach(func(_, v gjson.Result) bool {
		if v.Type == gjson.String && strings.TrimSpace(v.Str) != "" && len(v.Str) <= maxQuoted {
			out = v.Str
			return false
		}
		return true
	})
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// quoteShort keeps a quoted value on one line and under maxQuoted bytes,
// cut on a rune boundary.
func quoteShort(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxQuoted {
		s = clamp.CutUTF8(s, maxQuoted) + "…"
	}
	return s
}

// firstLines returns up to n non-empty lines of text, verbatim, skipping
// lines too long to quote.
func firstLines(text string, n int) []string {
	var out []string
	for rest := text; rest != "" && len(out) < n; {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		l = strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(l) == "" || len(l) > compress.MaxKeyLineBytes {
			continue
		}
		out = append(out, l)
	}
	return out
}

// plural formats "1 line", "1,234 bytes".
func plural(n int, unit string) string {
	s := thousands(n) + " " + unit
	if n != 1 {
		s += "s"
	}
	return s
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}
