package compress

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Codex CLI's code mode gives the model one tool, exec, whose input is a
// JavaScript program that calls the harness's tools:
//
//	const r = await tools.exec_command({cmd:"sed -n '1,240p' src/a.rs","workdir":"/w"}); text(r.output);
//
// The shell command is a string literal inside it. Read as a command line,
// the program is no command at all ("const"): a summary of the call said
// it ran `const r = await tools.exec_command({cmd:"sed -n …`, cut short
// before the command's operands. CommandLine reads the commands out.

// execCall is what a code-mode program calls to run a shell command.
const execCall = "exec_command("

// maxCodeModeCommands bounds the commands read out of one program
// (Promise.all of a few is the usual most).
const maxCodeModeCommands = 16

// toolsCall is how a code-mode program reaches any of the harness's tools.
const toolsCall = "await tools."

// codeModeCommand returns the shell commands a code-mode program runs,
// one per line, and whether program is one. A program that runs no
// command (it polls a session with write_stdin, applies a patch through
// the harness) has none: "". The scan is linear in the program: each
// call's cmd is found after the call and read once.
func codeModeCommand(program string) (string, bool) {
	if !strings.Contains(program, execCall) {
		return "", strings.Contains(program, toolsCall)
	}
	var cmds []string
	for rest := program; len(cmds) < maxCodeModeCommands; {
		i := strings.Index(rest, execCall)
		if i < 0 {
			break
		}
		rest = rest[i+len(execCall):]
		// The call's argument object ends at the next call at the latest:
		// a cmd past it is that call's.
		obj := rest
		if j := strings.Index(obj, execCall); j >= 0 {
			obj = obj[:j]
		}
		if cmd, ok := cmdMember(obj); ok {
			cmds = append(cmds, cmd)
		}
	}
	return strings.Join(cmds, "\n"), true
}

// cmdMember reads the value of the first cmd member of a JavaScript object
// literal's text: cmd:"…", "cmd": '…' or cmd:`…` (a template without
// substitutions).
func cmdMember(obj string) (string, bool) {
	for off := 0; off < len(obj); {
		k := strings.Index(obj[off:], "cmd")
		if k < 0 {
			return "", false
		}
		k += off
		off = k + 3
		// A key, not the end of another word (a "subcmd" member, "mycmd").
		if k > 0 && isWordByte(obj[k-1]) {
			continue
		}
		rest := obj[k+3:]
		if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
			rest = rest[1:] // a quoted key
		}
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" || rest[0] != ':' {
			continue
		}
		// The member found: its value is read once, and a value that is
		// not a plain literal (a variable, a template with a
		// substitution) ends the search, so no byte is read twice.
		return jsString(strings.TrimLeft(rest[1:], " \t\n"))
	}
	return "", false
}

// jsString decodes the JavaScript string literal s starts with. A template
// literal with a substitution is not read: its value is not in the text.
func jsString(s string) (string, bool) {
	if s == "" || (s[0] != '"' && s[0] != '\'' && s[0] != '`') {
		return "", false
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), true
		case c == '$' && q == '`' && i+1 < len(s) && s[i+1] == '{':
			return "", false
		case c == '\n' && q != '`':
			return "", false // an unterminated literal
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0', 'b', 'f', 'v':
			b.WriteByte(' ') // control characters a command line never needs read
		case 'x':
			if i+2 >= len(s) {
				return "", false
			}
			r, ok := hexValue(s[i+1 : i+3])
			if !ok {
				return "", false
			}
			b.WriteRune(r)
			i += 2
		case 'u':
			r, n := jsUnicodeEscape(s[i+1:])
			if n == 0 {
				return "", false
			}
			b.WriteRune(r)
			i += n
		case '\n':
			// A line continuation: nothing.
		default:
			b.WriteByte(e) // \\ \" \' \` and any other escaped character stand for themselves
		}
	}
	return "", false
}

// jsUnicodeEscape reads the XXXX or {X…} of a \u escape: the rune, and the
// bytes read (0 when malformed).
func jsUnicodeEscape(s string) (rune, int) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s[:min(len(s), 8)], '}') // at most six digits: never a scan of the rest
		if end < 2 || end > 7 {
			return 0, 0
		}
		r, ok := hexValue(s[1:end])
		if !ok || !utf8.ValidRune(r) {
			return 0, 0
		}
		return r, end + 1
	}
	if len(s) < 4 {
		return 0, 0
	}
	r, ok := hexValue(s[:4])
	if !ok {
		return 0, 0
	}
	if !utf8.ValidRune(r) {
		r = utf8.RuneError // half of a surrogate pair: the command's words are what matters
	}
	return r, 4
}

// hexValue parses hexadecimal digits.
func hexValue(s string) (rune, bool) {
	v, err := strconv.ParseUint(s, 16, 32)
	return rune(v), err == nil
}
