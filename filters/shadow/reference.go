package shadow

import (
	"strconv"
	"strings"
)

// DefaultTool is the name of the expand tool named in the hint line when
// Reference gets an empty tool name.
const DefaultTool = "expand_context"

const (
	refPrefix  = "[toolproc shadow_id="
	refMiddle  = " original="
	refSuffix  = " bytes; compressed below]\n"
	hintPrefix = "[call "
	hintMiddle = ` with {"id":"`
	hintSuffix = `"} to read the full original]` + "\n"
	maxToolLen = 64
)

// Reference returns the two lines that start a compressed result: a
// reference line carrying the shadow id and the original size, and a hint
// naming the expand tool, each ending in "\n":
//
//	[toolproc shadow_id=sh_… original=48213 bytes; compressed below]
//	[call expand_context with {"id":"sh_…"} to read the full original]
//
// id should satisfy ValidID. The output is always two ASCII lines: bytes of
// id or tool outside [A-Za-z0-9_.-] are replaced by '_', a tool name longer
// than 64 bytes is cut, an empty tool is DefaultTool and a negative size is 0.
func Reference(id string, originalBytes int, tool string) string {
	if tool == "" {
		tool = DefaultTool
	}
	if len(tool) > maxToolLen {
		tool = tool[:maxToolLen]
	}
	if originalBytes < 0 {
		originalBytes = 0
	}
	var b strings.Builder
	b.Grow(len(refPrefix) + len(refMiddle) + len(refSuffix) + len(hintPrefix) + len(hintMiddle) +
		len(hintSuffix) + 2*len(id) + len(tool) + 20)
	b.WriteString(refPrefix)
	writeSafe(&b, id)
	b.WriteString(refMiddle)
	b.WriteString(strconv.Itoa(originalBytes))
	b.WriteString(refSuffix)
	b.WriteString(hintPrefix)
	writeSafe(&b, tool)
	b.WriteString(hintMiddle)
	writeSafe(&b, id)
	b.WriteString(hintSuffix)
	return b.String()
}

func writeSafe(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isNameByte(c) || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
}

// isNameByte reports whether c can be part of an identifier token; an id
// must not touch such a byte on either side to count as one.
func isNameByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// ParseReference reads the two lines written by Reference at the start of
// text. It returns the shadow id, the original size, the text after the two
// lines, and ok=false (with zero values) when text does not start with a
// well-formed reference. The tool named in the hint is not checked.
func ParseReference(text string) (id string, originalBytes int, rest string, ok bool) {
	s, found := strings.CutPrefix(text, refPrefix)
	if !found || len(s) < IDLen || !ValidID(s[:IDLen]) {
		return "", 0, "", false
	}
	id, s = s[:IDLen], s[IDLen:]
	if s, found = strings.CutPrefix(s, refMiddle); !found {
		return "", 0, "", false
	}
	n := 0
	for n < len(s) && n < 19 && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	if n == 0 || n > 1 && s[0] == '0' {
		return "", 0, "", false
	}
	size, err := strconv.Atoi(s[:n])
	if err != nil {
		return "", 0, "", false
	}
	if s, found = strings.CutPrefix(s[n:], refSuffix); !found {
		return "", 0, "", false
	}
	hint, after, found := strings.Cut(s, "\n")
	if !found || !strings.HasPrefix(hint, hintPrefix) || !strings.HasSuffix(hint, hintSuffix[:len(hintSuffix)-1]) ||
		!strings.Contains(hint, `{"id":"`+id+`"}`) {
		return "", 0, "", false
	}
	return id, size, after, true
}
