package stream

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The scanner as it was before review finding 11's audit, kept as an
// oracle: the linear scanner must give the same pieces on any input and
// chunking (only the speed changed). Its hold limit is a field so tests can
// reach the give-up path with small inputs.
type xmlOldScanner struct {
	buf       []byte // held text: empty, or a suffix that may still become a block
	name      string // non-empty while buf starts with a complete block head
	bodyStart int    // where the block body starts in buf (after the head)
	closeFrom int
	maxHold   int
}

// Idle reports whether nothing is held, so text without '<' would pass
// through Feed unchanged.
func (s *xmlOldScanner) Idle() bool { return len(s.buf) == 0 }

// Feed consumes text and returns the pieces it completed.
func (s *xmlOldScanner) Feed(text string) []xmlPiece {
	if text == "" {
		return nil
	}
	if len(s.buf) == 0 && strings.IndexByte(text, '<') < 0 {
		return []xmlPiece{{Kind: xmlText, Text: text, Raw: text}}
	}
	s.buf = append(s.buf, text...)
	return s.scan(nil, false)
}

// Flush ends the text: what is held is released as text (an unclosed
// `<invoke` is not a call) and the scanner is reset.
func (s *xmlOldScanner) Flush() []xmlPiece {
	out := s.scan(nil, true)
	*s = xmlOldScanner{}
	return out
}

func (s *xmlOldScanner) scan(out []xmlPiece, final bool) []xmlPiece {
	for len(s.buf) > 0 {
		if s.name != "" {
			// buf opens with a complete head: look for the end of the block.
			i := bytes.Index(s.buf[s.closeFrom:], []byte(xmlClose))
			if i < 0 {
				if final {
					// No `</invoke>` anywhere after: no block can match here or later.
					out = xmlAppendText(out, string(s.buf))
					s.buf, s.name = nil, ""
					return out
				}
				if len(s.buf) > s.maxHold {
					// Give up on this head: its '<' is text, rescan after it.
					out = xmlAppendText(out, "<")
					s.buf, s.name = s.buf[1:], ""
					continue
				}
				// Resume where a split `</invoke>` could begin.
				s.closeFrom = max(s.bodyStart, len(s.buf)-len(xmlClose)+1)
				return out
			}
			end := s.closeFrom + i
			raw := string(s.buf[:end+len(xmlClose)])
			out = append(out, xmlBlock(s.name, raw[s.bodyStart:end], raw))
			s.buf, s.name = s.buf[len(raw):], ""
			continue
		}
		// Text up to the next head, or up to a tail that may become one.
		p := 0
		for {
			i := bytes.IndexByte(s.buf[p:], '<')
			if i < 0 {
				out = xmlAppendText(out, string(s.buf))
				s.buf = s.buf[:0]
				return out
			}
			p += i
			name, headLen, more := xmlHead(s.buf[p:])
			if headLen > 0 {
				out = xmlAppendText(out, string(s.buf[:p]))
				s.buf = s.buf[p:]
				s.name, s.bodyStart, s.closeFrom = name, headLen, headLen
				break
			}
			if more {
				if final {
					out = xmlAppendText(out, string(s.buf))
					s.buf = nil
				} else {
					out = xmlAppendText(out, string(s.buf[:p]))
					s.buf = s.buf[p:]
				}
				return out
			}
			p++
		}
	}
	return out
}

func xmlRandomText(rng *rand.Rand, n int) string {
	atoms := []string{`<invoke name="f">`, `<invoke name="g">`, `</invoke>`, `<parameter name="p">`, `</parameter>`,
		`<`, `<inv`, `"`, `>`, "x", "yy ", "\n", `<invoke name="`, `</inv`, `oke>`, "é"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(atoms[rng.IntN(len(atoms))])
	}
	return b.String()
}

func xmlChunks(rng *rand.Rand, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		n := 1 + rng.IntN(40)
		out = append(out, s[i:min(i+n, len(s))])
		i += n
	}
	return out
}

func TestXMLScannerMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	for i := 0; i < 3000; i++ {
		text := xmlRandomText(rng, 1+rng.IntN(400))
		hold := 8 + rng.IntN(120)
		chunks := xmlChunks(rng, text)
		s := xmlScanner{maxHold: hold}
		o := xmlOldScanner{maxHold: hold}
		var got, want []xmlPiece
		for _, c := range chunks {
			got = append(got, s.Feed(c)...)
			want = append(want, o.Feed(c)...)
		}
		got = append(got, s.Flush()...)
		want = append(want, o.Flush()...)
		if g, w := xmlShow(got), xmlShow(want); g != w {
			t.Fatalf("hold %d, chunks %q:\ngot  %s\nwant %s", hold, chunks, g, w)
		}
	}
}

// Heads that never close, past the hold limit: each give-up used to rescan
// the whole held block for `</invoke>` (O(heads × hold)), and text pieces
// grew by string concatenation. ns/byte must be flat from 1 MiB to 16 MiB.
func BenchmarkXMLScannerUnclosedHeads(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		text := strings.Repeat(`<invoke name="a">`, size/17)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				s := xmlScanner{maxHold: 256 << 10}
				for i := 0; i < len(text); i += 16 << 10 {
					s.Feed(text[i:min(i+16<<10, len(text))])
				}
				s.Flush()
			}
		})
	}
}

// One block with many distinct parameters: the duplicate-name lookup was
// O(params²).
func BenchmarkXMLParamsMany(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		var body bytes.Buffer
		for i := 0; body.Len() < size; i++ {
			fmt.Fprintf(&body, `<parameter name="p%d">v</parameter>`, i)
		}
		s := body.String()
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				xmlParams(s)
			}
		})
	}
}
