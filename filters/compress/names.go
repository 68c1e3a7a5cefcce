package compress

// namesCode reports whether line l holds a word that names something in
// code: six bytes or more of letters, digits, '_', '.', '/' and '-', with a
// digit, an '_', a '.', a '/' or a capital after its first byte
// (`createShare`, `share.service.ts`, `apps/api/src`, `RUST_LOG`). Prose
// words are not names; a report's lines that carry names are where an
// agent finds what to open, grep or edit next.
func namesCode(l string) bool {
	for i := 0; i < len(l); {
		c := nameClass[l[i]]
		if c == 0 {
			i++
			continue
		}
		// The word runs to j; fm is its first mark after its first byte.
		j, fm := i+1, -1
		for ; j < len(l); j++ {
			d := nameClass[l[j]]
			if d == 0 {
				break
			}
			if d&nameMark != 0 && fm < 0 {
				fm = j
			}
		}
		// Trailing punctuation is not part of the word ("see foo.", "a/").
		end := j
		for end > i && (l[end-1] == '.' || l[end-1] == '/' || l[end-1] == '-') {
			end--
		}
		if end-i >= 6 && fm >= 0 && (c&nameDigit != 0 || fm < end) {
			return true
		}
		i = j
	}
	return false
}

// nameClass holds, per byte, whether it may be in a name (nameByte), is a
// mark of one after its first byte (nameMark: a digit, '_', '.', '/' or a
// capital) and is a digit: one load per byte in namesCode's loop, which
// reads every fill line of a text output.
const (
	nameByte = 1 << iota
	nameMark
	nameDigit
)

var nameClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = nameByte
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = nameByte | nameMark
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = nameByte | nameMark | nameDigit
	}
	t['_'] = nameByte | nameMark
	t['.'] = nameByte | nameMark
	t['/'] = nameByte | nameMark
	t['-'] = nameByte
	return t
}()

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
