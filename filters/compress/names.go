package compress

// namesCode reports whether line l holds a word that names something in
// code: six bytes or more of letters, digits, '_', '.', '/' and '-', with a
// digit, an '_', a '.', a '/' or a capital after its first byte
// (`createShare`, `share.service.ts`, `apps/api/src`, `RUST_LOG`). Prose
// words are not names; a report's lines that carry names are where an
// agent finds what to open, grep or edit next.
func namesCode(l string) bool {
	for i := 0; i < len(l); {
		c := l[i]
		if !isNameByte(c) {
			i++
			continue
		}
		j, marked := i+1, false
		for j < len(l) && isNameByte(l[j]) {
			if d := l[j]; d >= '0' && d <= '9' || d == '_' || d == '.' || d == '/' || d >= 'A' && d <= 'Z' {
				marked = true
			}
			j++
		}
		// Trailing punctuation is not part of the word ("see foo.", "a/").
		end := j
		for end > i && (l[end-1] == '.' || l[end-1] == '/' || l[end-1] == '-') {
			end--
		}
		if marked && end-i >= 6 && (c >= '0' && c <= '9' || isMarkedWithin(l[i:end])) {
			return true
		}
		i = j
	}
	return false
}

// isMarkedWithin reports whether w has a digit, '_', '.', '/' or a capital
// after its first byte.
func isMarkedWithin(w string) bool {
	for k := 1; k < len(w); k++ {
		if d := w[k]; d >= '0' && d <= '9' || d == '_' || d == '.' || d == '/' || d >= 'A' && d <= 'Z' {
			return true
		}
	}
	return false
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '/' || c == '-'
}

// nameRanks ranks the fill lines of a text output (a sub-agent's report, a
// web page, a program's prose) by their distance from the nearer end as
// fillRanks does, a line that names nothing in code counting namelessRank
// times as far: an agent's next call names a file, a function or a setting
// the report mentioned, not its prose.
func nameRanks(p *plan) {
	n := p.n
	for i := range p.cls {
		if p.cls[i].tier == tierFill && p.cls[i].rank == 0 {
			r := min(i, 2*(n-1-i))
			if !namesCode(p.line(i)) {
				r *= namelessRank
			}
			p.cls[i].rank = int32(r)
		}
	}
}

const namelessRank = 3
