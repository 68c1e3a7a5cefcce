package compress

import "strings"

// selectFileRead keeps the head and the tail of a file read, then its
// definition lines (func, type, class, def, ...) while the budget allows,
// then grows head and tail. Line numbers stay as the tool printed them
// (Claude Code "   12→", cat -n, SWE-agent "12:"); the markers give the
// omitted range: "[… 240 lines omitted: lines 121-360 …]", so the reader can
// ask for exactly that range.
func selectFileRead(p *plan) {
	p.style = reasonRange
	n := len(p.lines)
	style := p.numberStyle()
	if style != numNone {
		p.lineNo = func(i int) int {
			if numberedLine(p.lines[i]) == style {
				return lineNumber(p.lines[i])
			}
			return -1
		}
	}

	used := p.markCost
	// add keeps line i when it fits in limit; it reports false when not.
	add := func(i int, limit int) bool {
		if p.keep[i] {
			return true
		}
		c := p.lineCost(i) + p.gapDelta(i)*p.markCost
		if used+c > limit {
			return false
		}
		p.keep[i] = true
		used += c
		return true
	}
	// Harness lines around the file (SWE-agent's "[File: ...]" and "(12 more
	// lines above)", Claude Code's <system-reminder>) are kept whole.
	for i, l := range p.lines {
		if style != numNone && numberedLine(l) == style {
			continue
		}
		if isReadFrame(l) {
			p.keep[i] = true
			used += p.lineCost(i)
		}
	}
	b := p.budget
	h, t := 0, n-1
	for h <= t && add(h, b*30/100) {
		h++
	}
	for t >= h && add(t, b*40/100) {
		t--
	}
	// Landmarks in the middle, in file order: definitions and the lines
	// that raise, catch or report errors.
	for i := h; i <= t; i++ {
		code := p.lines[i]
		if style != numNone {
			code = stripNumber(code, style)
		}
		if isDefinition(code) || isErrorLine(code) {
			add(i, b*95/100)
		}
	}
	// Grow head and tail, two head lines per tail line.
	for h <= t {
		okH := add(h, b)
		if okH {
			h++
		}
		okH2 := h <= t && add(h, b)
		if okH2 {
			h++
		}
		okT := h <= t && add(t, b)
		if okT {
			t--
		}
		if !okH && !okH2 && !okT {
			break
		}
	}
}

// isReadFrame matches the lines a read tool wraps around the file.
func isReadFrame(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "[File: ") || strings.HasPrefix(t, "(") && (strings.HasSuffix(t, "lines above)") || strings.HasSuffix(t, "lines below)")) ||
		strings.HasPrefix(t, "<system-reminder>") || strings.HasPrefix(t, "</system-reminder>") || looksLikeMarker(t)
}

// stripNumber removes a line-number prefix.
func stripNumber(l string, style numbering) string {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	i += digits(l[i:])
	switch style {
	case numArrow:
		return strings.TrimPrefix(l[i:], "→")
	case numTab:
		return strings.TrimPrefix(l[i:], "\t")
	case numColon:
		return strings.TrimPrefix(l[i:], ":")
	}
	return l
}

// definitionStarts are the keywords that open a definition in common
// languages, as a line starts after its indentation.
var definitionStarts = [...]string{
	"func ", "type ", "class ", "def ", "async def ", "interface ", "struct ", "enum ", "trait ", "impl ", "impl<",
	"fn ", "pub fn ", "pub(crate) fn ", "pub struct ", "pub enum ", "pub trait ", "pub type ", "pub mod ", "mod ",
	"async fn ", "pub async fn ", "function ", "async function ", "export ", "module ", "namespace ",
	"public ", "private ", "protected ", "internal ", "static ", "abstract ", "sealed ", "object ", "data class ",
	"fun ", "package ", "var (", "const (", "#define ", "template<", "template <", "CREATE ", "message ", "service ",
}

// isDefinition reports whether a code line opens a definition. Deeply
// indented lines (bodies) do not count.
func isDefinition(code string) bool {
	t := trimLeft(code)
	if len(code)-len(t) > 8 || t == "" {
		return false
	}
	for _, k := range definitionStarts {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	return false
}
