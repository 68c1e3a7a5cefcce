package compress

import (
	"strings"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// harnessEnvelope splits a tool result that wraps a command's output in a
// harness's own lines into those before it, the output, and those after
// it (harnessTags, harnessFields); ok is false for any other text.
func harnessEnvelope(text string) (head, body, tail string, ok bool) {
	if head, body, tail, ok = harnessTags(text); ok {
		return head, body, tail, ok
	}
	return harnessFields(text)
}

// harnessTags splits a tool result that wraps a command's output in tag
// lines into the tags before it, the output, and the tags after it: Claude
// Code's TaskOutput (`<retrieval_status>`, `<task_id>`, `<task_type>`,
// `<status>`, `<exit_code>`, then the output between `<output>` and
// `</output>`), the BashOutput it replaced (`<stdout>` … `</stdout>`,
// then `<timestamp>`), and mini-swe-agent's observation (`<returncode>`,
// then `<output>`). The output is read as the command's output it is: its
// last line is the run's summary, not the closing tag, and its kind is its
// own. ok is false for any other text, and when the output is under three
// quarters of it.
func harnessTags(text string) (head, body, tail string, ok bool) {
	at := 0
	for n := 0; n < maxEnvelopeLines && at < len(text); n++ {
		i := strings.IndexByte(text[at:], '\n')
		if i < 0 || i > maxHarnessLine {
			return "", "", "", false
		}
		l := strings.TrimSuffix(text[at:at+i], "\r")
		switch {
		case l == "":
		case l == "<output>" || l == "<stdout>":
			closing := "</" + l[1:]
			start := at + i + 1
			end := strings.LastIndex(text[start:], closing)
			if end < 0 {
				return "", "", "", false
			}
			end += start
			if (end-start)*4 < len(text)*3 || !onlyTagLines(text[end+len(closing):]) {
				return "", "", "", false
			}
			return text[:start], text[start:end], text[end:], true
		case isTagLine(l):
		default:
			return "", "", "", false
		}
		at += i + 1
	}
	return "", "", "", false
}

// maxEnvelopeLines bounds the tag lines harnessTags reads before the
// output: TaskOutput has five tags and the blank lines between them.
const maxEnvelopeLines = 16

// isTagLine matches a line that is one element with a short value:
// `<status>completed</status>`.
func isTagLine(l string) bool {
	if len(l) < 7 || l[0] != '<' || l[len(l)-1] != '>' {
		return false
	}
	end := strings.IndexByte(l, '>')
	name := l[1:end]
	if name == "" || strings.ContainsAny(name, " /<") {
		return false
	}
	return strings.HasSuffix(l, "</"+name+">")
}

// onlyTagLines reports whether s holds nothing but blank and tag lines
// after the output's closing tag (BashOutput's `<timestamp>`).
func onlyTagLines(s string) bool {
	for l := range strings.SplitSeq(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !isTagLine(l) {
			return false
		}
	}
	return true
}

// harnessFields splits Gemini CLI's run_shell_command result ("Command:
// …", "Directory: …", "Output: " and the output, then "Error: …", "Exit
// Code: …", "Signal: …", "Background PIDs: …", "Process Group PGID: …")
// into the lines before the output's second line (its first shares the
// "Output: " line, and a repeat or gap marker must follow a line of the
// output as it was), the rest of the output, and the fields after it, from
// the line break before "Error: ". ok is false for any other text, and
// when the output is under three quarters of it.
func harnessFields(text string) (head, body, tail string, ok bool) {
	cmd, rest, found := strings.Cut(text, "\n")
	if !found || !strings.HasPrefix(cmd, "Command: ") || len(cmd) > maxHarnessLine {
		return "", "", "", false
	}
	if dir, after, found := strings.Cut(rest, "\n"); found && strings.HasPrefix(dir, "Directory: ") && len(dir) <= maxHarnessLine {
		rest = after
	}
	if !strings.HasPrefix(rest, "Output: ") {
		return "", "", "", false
	}
	first := strings.IndexByte(rest, '\n')
	if first < 0 {
		return "", "", "", false
	}
	start := len(text) - len(rest) + first + 1
	end := strings.LastIndex(text, "\nError: ")
	if end < start || (end-start)*4 < len(text)*3 {
		return "", "", "", false
	}
	for l := range strings.SplitSeq(text[end+1:], "\n") {
		k, _, found := strings.Cut(l, ": ")
		if !found || !shellFields[k] {
			return "", "", "", false
		}
	}
	return text[:start], text[start:end], text[end:], true
}

// shellFields are the fields Gemini CLI writes after a command's output.
var shellFields = map[string]bool{"Error": true, "Exit Code": true, "Signal": true, "Background PIDs": true, "Process Group PGID": true}

// harnessJSON splits text into a harness's short header lines and the JSON
// object after them that is most of it (at least three quarters); ok is
// false for any other text, a bare JSON document included.
func harnessJSON(text string) (header, body string, ok bool) {
	at := 0
	for n := 0; n < maxHarnessLines && at < len(text); n++ {
		if text[at] == '{' {
			if at == 0 || (len(text)-at)*4 < len(text)*3 || !jsonsafe.ValidString(text[at:]) {
				return "", "", false
			}
			return text[:at], text[at:], true
		}
		i := strings.IndexByte(text[at:], '\n')
		if i < 0 || i > maxHarnessLine {
			return "", "", false
		}
		at += i + 1
	}
	return "", "", false
}

// maxHarnessLines and maxHarnessLine bound the header harnessJSON reads.
const (
	maxHarnessLines = 8
	maxHarnessLine  = 256
)
