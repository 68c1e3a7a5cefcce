package clamp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var allKeeps = []Keep{KeepHead, KeepTail, KeepHeadTail}

// checkApply runs Apply and checks every promise of its contract: same
// length, honest report, untouched when under the limits, valid UTF-8 and
// both limits when changed, deterministic and idempotent.
func checkApply(t testing.TB, in []string, lim Limits) ([]string, Report) {
	t.Helper()
	out, rep := Apply(in, lim)
	if len(out) != len(in) {
		t.Fatalf("Apply returned %d blocks for %d", len(out), len(in))
	}
	var inBytes, inLines, outBytes, outLines int
	for i := range in {
		inBytes += len(in[i])
		inLines += CountLines(in[i])
		outBytes += len(out[i])
		outLines += CountLines(out[i])
	}
	if rep.BytesBefore != inBytes || rep.LinesBefore != inLines ||
		rep.BytesAfter != outBytes || rep.LinesAfter != outLines {
		t.Fatalf("report %+v, counted before %d B %d L, after %d B %d L",
			rep, inBytes, inLines, outBytes, outLines)
	}
	maxBytes, maxLines := axis(lim.MaxBytes), axis(lim.MaxLines)
	under := inBytes <= maxBytes && inLines <= maxLines
	if under != !rep.Changed {
		t.Fatalf("input under limits = %v but Changed = %v (%+v, %+v)", under, rep.Changed, lim, rep)
	}
	if !rep.Changed {
		if !slices.Equal(out, in) || rep.BlocksReplaced != 0 {
			t.Fatalf("unchanged result differs from its input")
		}
	} else {
		for i, s := range out {
			if !utf8.ValidString(s) {
				t.Fatalf("block %d is not valid UTF-8: %q", i, s)
			}
		}
		if outBytes > maxBytes || outLines > maxLines {
			t.Fatalf("limits %+v broken: %d bytes, %d lines", lim, outBytes, outLines)
		}
	}
	if rep.BlocksReplaced < 0 || rep.BlocksReplaced > len(in) {
		t.Fatalf("BlocksReplaced = %d for %d blocks", rep.BlocksReplaced, len(in))
	}
	// Deterministic: the same input gives the same bytes.
	out2, rep2 := Apply(in, lim)
	if !slices.Equal(out, out2) || rep != rep2 {
		t.Fatalf("second run differs")
	}
	// Idempotent: the output is under the limits, so it passes untouched.
	out3, rep3 := Apply(out, lim)
	if rep3.Changed || !slices.Equal(out3, out) {
		t.Fatalf("Apply is not idempotent: %q -> %q", out, out3)
	}
	return out, rep
}

// checkText is checkApply for Text, which must agree with Apply.
func checkText(t testing.TB, s string, lim Limits) (string, Report) {
	t.Helper()
	out, rep := checkApply(t, []string{s}, lim)
	got, grep := Text(s, lim)
	if got != out[0] || grep != rep {
		t.Fatalf("Text and Apply disagree: %q %+v vs %q %+v", got, grep, out[0], rep)
	}
	return got, rep
}

// numbered returns n lines "line 1\n" ... "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// genLog builds a deterministic, realistic test log of about size bytes:
// ASCII lines mixed with lines holding 2-, 3- and 4-byte runes.
func genLog(size int) string {
	words := []string{"ok", "café", "naïve", "中文", "日本語", "🙂", "🚀", "résumé", "Grüße", "tést"}
	var b strings.Builder
	b.Grow(size + 128)
	x := uint32(2463534242)
	for i := 1; b.Len() < size; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		fmt.Fprintf(&b, "2026-01-02T03:04:%02dZ INFO  pkg/worker_test.go:%d: case %d", i%60, x%900+10, i)
		if x%3 != 0 {
			b.WriteString(" ")
			b.WriteString(words[x%uint32(len(words))])
			b.WriteString(" ")
			b.WriteString(words[(x>>8)%uint32(len(words))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestValidate(t *testing.T) {
	tests := []struct {
		lim     Limits
		wantErr []string // substrings the error must hold; nil means valid
	}{
		{Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines}, nil},
		{Limits{MaxBytes: 256, MaxLines: 4, Keep: KeepHeadTail}, nil},
		{Limits{MaxBytes: 1 << 20, MaxLines: 1 << 20, Keep: KeepTail}, nil},
		{Limits{MaxBytes: 255, MaxLines: 4}, []string{"MaxBytes", "255", "at least 256"}},
		{Limits{MaxBytes: 0, MaxLines: 2000}, []string{"MaxBytes"}},
		{Limits{MaxBytes: 51200, MaxLines: 3}, []string{"MaxLines", "at least 4"}},
		{Limits{MaxBytes: 51200, MaxLines: 2000, Keep: "middle"},
			[]string{"Keep", `"middle"`, `"head"`, `"tail"`, `"head_tail"`}},
		{Limits{MaxBytes: 1, MaxLines: 1, Keep: "x"}, []string{"MaxBytes", "MaxLines", "Keep"}},
	}
	for _, tt := range tests {
		err := tt.lim.Validate()
		if tt.wantErr == nil {
			if err != nil {
				t.Errorf("Validate(%+v) = %v, want nil", tt.lim, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrInvalidLimits) {
			t.Errorf("Validate(%+v) = %v, want an ErrInvalidLimits", tt.lim, err)
			continue
		}
		for _, sub := range tt.wantErr {
			if !strings.Contains(err.Error(), sub) {
				t.Errorf("Validate(%+v) = %q, want it to mention %q", tt.lim, err, sub)
			}
		}
	}
}

func TestUnderLimitUntouched(t *testing.T) {
	lim := Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines}
	tests := [][]string{
		nil,
		{},
		{""},
		{"hello"},
		{"é中🙂\r\n"},
		{strings.Repeat("x", DefaultMaxBytes)}, // exactly at the byte limit
		{numbered(DefaultMaxLines)},            // exactly at the line limit
		{strings.Repeat("a\n", 1000), strings.Repeat("b\n", 1000)}, // together at the line limit
		{"bad \xff utf-8 stays as it is"},                          // under the limits: not repaired
		{"", "two", ""},
	}
	for _, in := range tests {
		for _, keep := range allKeeps {
			lim.Keep = keep
			out, rep := checkApply(t, in, lim)
			if rep.Changed {
				t.Errorf("%q changed", in)
			}
			if len(in) > 0 && &out[0] != &in[0] {
				t.Errorf("Apply copied an unchanged result instead of returning it")
			}
		}
	}

	s := genLog(1 << 20)
	big := Limits{MaxBytes: 2 << 20, MaxLines: 1 << 20}
	if n := testing.AllocsPerRun(10, func() { Text(s, big) }); n != 0 {
		t.Errorf("Text on an under-limit result allocates %v times", n)
	}
	in := []string{s, s}
	big.MaxBytes = 4 << 20
	if n := testing.AllocsPerRun(10, func() { Apply(in, big) }); n != 0 {
		t.Errorf("Apply on an under-limit result allocates %v times", n)
	}
}

// TestExactOutput pins the three texts the clamp adds and where they go.
func TestExactOutput(t *testing.T) {
	ten := numbered(10) // 10 lines, 71 bytes
	tests := []struct {
		name string
		in   string
		lim  Limits
		want string
	}{
		{
			name: "head by lines",
			in:   ten,
			lim:  Limits{MaxLines: 6},
			want: "line 1\nline 2\nline 3\nline 4\n\n" +
				"[toolproc: tool output truncated, kept the first 4 of 10 lines (28 of 71 bytes); request smaller chunks (offset/limit) or specific sections]",
		},
		{
			name: "tail by lines",
			in:   ten,
			lim:  Limits{MaxLines: 6, Keep: KeepTail},
			want: "[toolproc: tool output truncated, kept the last 4 of 10 lines (29 of 71 bytes); request smaller chunks (offset/limit) or specific sections]\n\n" +
				"line 7\nline 8\nline 9\nline 10\n",
		},
		{
			name: "head_tail by lines",
			in:   ten,
			lim:  Limits{MaxLines: 7, Keep: KeepHeadTail},
			want: "line 1\nline 2\n[… 6 lines omitted …]\nline 9\nline 10\n\n" +
				"[toolproc: tool output truncated, kept 4 of 10 lines (29 of 71 bytes) from the start and the end; request the omitted middle in smaller chunks (offset/limit) or specific sections]",
		},
		{
			name: "head_tail inside one long line",
			in:   strings.Repeat("0123456789", 100),
			lim:  Limits{MaxBytes: 300, Keep: KeepHeadTail},
			want: "012345678901234567890123456789012345678\n" +
				"[… 1 line, 922 bytes omitted …]\n" +
				"123456789012345678901234567890123456789\n\n" +
				"[toolproc: tool output truncated, kept 1 of 1 lines (78 of 1000 bytes) from the start and the end; request the omitted middle in smaller chunks (offset/limit) or specific sections]",
		},
		{
			name: "short hint when the full one does not fit",
			in:   ten,
			lim:  Limits{MaxBytes: 60},
			// 60 bytes: the short hint and its blank line take 30.
			want: "line 1\nline 2\nline 3\nline 4\nli\n\n[toolproc: output truncated]",
		},
		{
			name: "no hint when even the short one does not fit",
			in:   ten,
			lim:  Limits{MaxBytes: 20},
			want: "line 1\nline 2\nline 3",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := checkText(t, tt.in, tt.lim)
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// splitHint separates the kept text from the hint the clamp added. The inputs
// of the tests that use it never contain "[toolproc:" themselves. A head hint
// follows a blank line, so its separator is "\n" after a kept text that ends
// a line and "\n\n" otherwise: the caller says which it expects.
func splitHint(out string, keep Keep, keptEndsLine bool) string {
	if keep == KeepTail {
		if !strings.HasPrefix(out, "[toolproc:") {
			return out
		}
		i := strings.Index(out, "]\n\n")
		if i < 0 {
			return "" // the hint alone: nothing kept
		}
		return out[i+3:]
	}
	i := strings.LastIndex(out, "[toolproc:")
	if i < 0 {
		return out
	}
	if keptEndsLine {
		return strings.TrimSuffix(out[:i], "\n")
	}
	return strings.TrimSuffix(out[:i], "\n\n")
}

func TestOverByteLimitMultiByte(t *testing.T) {
	// Single-line inputs, so the kept part never ends in '\n' and splitHint is
	// unambiguous. Every MaxBytes in the range moves the cut one byte.
	inputs := []string{
		strings.Repeat("é", 200),
		strings.Repeat("中", 150),
		strings.Repeat("🙂", 100),
		strings.Repeat("aé中🙂", 50),
		strings.Repeat("🙂中éa", 50),
	}
	for _, s := range inputs {
		for maxBytes := 1; maxBytes <= len(s)+1; maxBytes++ {
			for _, keep := range allKeeps {
				lim := Limits{MaxBytes: maxBytes, MaxLines: 100, Keep: keep}
				out, rep := checkText(t, s, lim)
				if !rep.Changed {
					continue
				}
				switch kept := splitHint(out, keep, false); keep {
				case KeepHead:
					if !strings.HasPrefix(s, kept) {
						t.Fatalf("head kept %q, not a prefix (MaxBytes %d)", kept, maxBytes)
					}
				case KeepTail:
					if !strings.HasSuffix(s, kept) {
						t.Fatalf("tail kept %q, not a suffix (MaxBytes %d)", kept, maxBytes)
					}
				case KeepHeadTail:
					// Cuts inside a line: the marker names bytes too.
					if maxBytes >= 256 && !strings.Contains(out, " bytes omitted …]") {
						t.Fatalf("head_tail output %q has no byte marker", out)
					}
				}
			}
		}
	}
}

func TestOverLineLimit(t *testing.T) {
	s := numbered(100)
	for _, keep := range allKeeps {
		for maxLines := 1; maxLines <= 101; maxLines++ {
			out, rep := checkText(t, s, Limits{MaxBytes: 1 << 20, MaxLines: maxLines, Keep: keep})
			if maxLines >= 100 {
				continue
			}
			if !rep.Changed || rep.LinesAfter > maxLines {
				t.Fatalf("MaxLines %d: %+v", maxLines, rep)
			}
			// Bytes are plentiful: every kept line is whole.
			kept := splitHint(out, keep, true)
			if keep == KeepHead && (!strings.HasPrefix(s, kept) || !endsLine(kept) && kept != "") {
				t.Fatalf("MaxLines %d: head kept %q", maxLines, kept)
			}
			if keep == KeepTail && !strings.HasSuffix(s, kept) {
				t.Fatalf("MaxLines %d: tail kept %q", maxLines, kept)
			}
		}
	}
}

func TestBothLimits(t *testing.T) {
	// 40 lines of 30 bytes: the line cut leaves 1 line less than 38*30 bytes,
	// then the byte cut decides.
	line := strings.Repeat("é", 14) + "x\n" // 30 bytes
	s := strings.Repeat(line, 40)
	for _, keep := range allKeeps {
		for _, lim := range []Limits{
			{MaxBytes: 600, MaxLines: 30, Keep: keep},  // bytes bind
			{MaxBytes: 5000, MaxLines: 10, Keep: keep}, // lines bind
			{MaxBytes: 400, MaxLines: 8, Keep: keep},   // both close
		} {
			checkText(t, s, lim)
		}
	}
	// Lines first, then bytes: with 3 lines allowed the head is at most the
	// first line (the hint takes two), and the 20 bytes left after the short
	// hint then cut that line on a rune boundary.
	out, _ := checkText(t, s, Limits{MaxBytes: 50, MaxLines: 3})
	if want := "éééééééééé\n\n[toolproc: output truncated]"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestCRLF(t *testing.T) {
	s := strings.Repeat("row é\r\n", 60) // 8 bytes a line
	if got := CountLines(s); got != 60 {
		t.Fatalf("CountLines = %d, want 60", got)
	}
	for _, keep := range allKeeps {
		for maxBytes := 1; maxBytes <= len(s); maxBytes++ {
			for _, maxLines := range []int{0, 5, 40} {
				out, _ := checkText(t, s, Limits{MaxBytes: maxBytes, MaxLines: maxLines, Keep: keep})
				// The input has no lone '\r', so the output must not have one.
				if strings.Count(out, "\r") != strings.Count(out, "\r\n") {
					t.Fatalf("MaxBytes %d MaxLines %d %s: lone \\r in %q", maxBytes, maxLines, keep, out)
				}
			}
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	lim := Limits{MaxBytes: 300, MaxLines: 50}

	// Under the limits: returned as is, invalid bytes included.
	in := "ok \xff\xfe"
	if out, rep := checkText(t, in, lim); out != in || rep.Changed {
		t.Errorf("under-limit invalid input was changed to %q", out)
	}

	// Over the limits: the result is repaired, each run of invalid bytes
	// becoming one U+FFFD, then cut.
	for _, keep := range allKeeps {
		lim.Keep = keep
		s := strings.Repeat("data \xff\xfe end 中\xe4\xb8\n", 40)
		out, rep := checkText(t, s, lim)
		if !rep.Changed || !strings.Contains(out, "\uFFFD") {
			t.Errorf("%s: invalid input not repaired: %q", keep, out)
		}
	}

	// Every cut offset through a text full of invalid bytes.
	s := strings.Repeat("\xf0\x9f\x99a\x80\xe4\xb8\xadb\xff", 30)
	for maxBytes := 1; maxBytes < len(s)+4; maxBytes++ {
		for _, keep := range allKeeps {
			checkText(t, s, Limits{MaxBytes: maxBytes, MaxLines: 3, Keep: keep})
		}
	}

	// Repair alone can bring a result under the limits: long runs of invalid
	// bytes shrink to 3 bytes each. Changed, but nothing cut and no hint.
	out, rep := checkText(t, strings.Repeat("\xff", 1000), Limits{MaxBytes: 500})
	if out != "\uFFFD" || !rep.Changed {
		t.Errorf("got %q %+v, want one U+FFFD", out, rep)
	}
}

func TestMultiBlock(t *testing.T) {
	b10 := numbered(10) // 71 bytes
	tests := []struct {
		name         string
		in           []string
		lim          Limits
		wantReplaced int
		check        func(t *testing.T, in, out []string)
	}{
		{
			name:         "head keeps first blocks, placeholders after the cut",
			in:           []string{b10, b10, b10, b10},
			lim:          Limits{MaxLines: 20},
			wantReplaced: 2,
			check: func(t *testing.T, in, out []string) {
				if out[0] != in[0] {
					t.Errorf("first block not kept whole")
				}
				if !strings.HasPrefix(out[1], "line 1\n") || !strings.Contains(out[1], "[toolproc: tool output truncated, kept the first") {
					t.Errorf("second block not cut with hint: %q", out[1])
				}
				if out[2] != placeholder || out[3] != placeholder {
					t.Errorf("later blocks not placeholders: %q", out[2:])
				}
			},
		},
		{
			name:         "tail keeps last blocks, placeholders before the cut",
			in:           []string{b10, b10, b10, b10},
			lim:          Limits{MaxLines: 20, Keep: KeepTail},
			wantReplaced: 2,
			check: func(t *testing.T, in, out []string) {
				if out[3] != in[3] {
					t.Errorf("last block not kept whole")
				}
				if !strings.HasPrefix(out[2], "[toolproc: tool output truncated, kept the last") || !strings.HasSuffix(out[2], "line 10\n") {
					t.Errorf("third block not cut with hint in front: %q", out[2])
				}
				if out[0] != placeholder || out[1] != placeholder {
					t.Errorf("earlier blocks not placeholders: %q", out[:2])
				}
			},
		},
		{
			name: "head_tail keeps both ends, marker after the start, hint at the end",
			in:   []string{b10, b10, b10, b10, b10},
			// 30 lines: hint 2, marker 1; the start gets half of what is left
			// once 3 placeholders are set aside (12), the end takes the rest
			// and needs only 1 placeholder.
			lim:          Limits{MaxLines: 30, Keep: KeepHeadTail},
			wantReplaced: 1,
			check: func(t *testing.T, in, out []string) {
				want := []string{
					in[0],
					"line 1\nline 2\n[… 24 lines omitted …]",
					placeholder,
					"line 7\nline 8\nline 9\nline 10\n",
					in[4] + "\n[toolproc: tool output truncated, kept 26 of 50 lines (185 of 355 bytes) from the start and the end; request the omitted middle in smaller chunks (offset/limit) or specific sections]",
				}
				if !slices.Equal(out, want) {
					t.Errorf("got\n%q\nwant\n%q", out, want)
				}
			},
		},
		{
			name:         "head_tail whose end reaches back into the cut block",
			in:           []string{b10, "end\n"},
			lim:          Limits{MaxLines: 9, Keep: KeepHeadTail},
			wantReplaced: 0,
			check: func(t *testing.T, in, out []string) {
				want := []string{
					"line 1\nline 2\nline 3\n[… 5 lines omitted …]\nline 9\nline 10\n",
					"end\n\n[toolproc: tool output truncated, kept 6 of 11 lines (40 of 75 bytes) from the start and the end; request the omitted middle in smaller chunks (offset/limit) or specific sections]",
				}
				if !slices.Equal(out, want) {
					t.Errorf("got\n%q\nwant\n%q", out, want)
				}
			},
		},
		{
			name:         "empty blocks stay empty",
			in:           []string{"", b10, "", b10, ""},
			lim:          Limits{MaxLines: 8},
			wantReplaced: 1,
			check: func(t *testing.T, in, out []string) {
				if out[0] != "" || out[2] != "" || out[4] != "" {
					t.Errorf("empty blocks changed: %q", out)
				}
				if out[3] != placeholder {
					t.Errorf("block 3 = %q, want the placeholder", out[3])
				}
			},
		},
		{
			name:         "cut in the middle block, placeholder reserved for the last",
			in:           []string{b10, b10, b10},
			lim:          Limits{MaxLines: 22},
			wantReplaced: 1,
			check: func(t *testing.T, in, out []string) {
				// 22 lines: hint 2, placeholder 1, block 0 whole, 9 of block 1.
				if out[0] != in[0] || !strings.HasPrefix(out[1], numbered(9)+"\n[toolproc:") || out[2] != placeholder {
					t.Errorf("got %q", out)
				}
			},
		},
		{
			name: "too many blocks for placeholders: they become empty",
			in:   slices.Repeat([]string{"x\n"}, 100),
			lim:  Limits{MaxLines: 20},
			// 99 placeholders would take more than a quarter of 20 lines, so
			// they are empty; 18 lines of content, then the hint on its own.
			wantReplaced: 100 - 19,
			check: func(t *testing.T, in, out []string) {
				if out[17] != "x\n" || !strings.HasPrefix(out[18], "[toolproc:") || out[19] != "" || out[99] != "" {
					t.Errorf("got %q", out[15:20])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, rep := checkApply(t, tt.in, tt.lim)
			if !rep.Changed {
				t.Fatalf("not changed")
			}
			if rep.BlocksReplaced != tt.wantReplaced {
				t.Errorf("BlocksReplaced = %d, want %d; out %q", rep.BlocksReplaced, tt.wantReplaced, out)
			}
			tt.check(t, tt.in, out)
		})
	}
}

func TestHeadTailSplitsBudget(t *testing.T) {
	s := numbered(6000)
	out, rep := checkText(t, s, Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines, Keep: KeepHeadTail})
	// 2000 lines: 2 for the hint and 1 for the marker leave 1997, 999 at the
	// start and 998 at the end.
	if !strings.HasPrefix(out, "line 1\n") || !strings.Contains(out, "line 999\n[… 4003 lines omitted …]\nline 5003\n") {
		t.Errorf("unexpected split: %q ... %q", out[:40], out[len(out)-300:])
	}
	if rep.LinesAfter != 2000 {
		t.Errorf("LinesAfter = %d, want 2000", rep.LinesAfter)
	}
}

func TestTinyLimits(t *testing.T) {
	inputs := [][]string{
		{numbered(30)},
		{strings.Repeat("中🙂", 100)},
		{"a\r\nb\r\nc\r\n", "é\n", "", "🙂🙂🙂"},
		{strings.Repeat("x\n", 20), strings.Repeat("y\n", 20), strings.Repeat("z\n", 20)},
	}
	for _, in := range inputs {
		for maxBytes := -1; maxBytes <= 320; maxBytes++ {
			for maxLines := -1; maxLines <= 8; maxLines++ {
				for _, keep := range append(allKeeps, "", "bogus") {
					checkApply(t, in, Limits{MaxBytes: maxBytes, MaxLines: maxLines, Keep: keep})
				}
			}
		}
	}
}

func TestNoLimitOnAnAxis(t *testing.T) {
	s := strings.Repeat("a long line with é中🙂 ", 1000) + "\n" + numbered(50)
	out, rep := checkText(t, s, Limits{MaxLines: 10}) // bytes unlimited
	if !strings.HasPrefix(out, s[:strings.IndexByte(s, '\n')+1]) || rep.LinesAfter != 10 {
		t.Errorf("line-only clamp: %+v", rep)
	}
	out, rep = checkText(t, s, Limits{MaxBytes: 1000}) // lines unlimited
	if rep.BytesAfter > 1000 || !utf8.ValidString(out) {
		t.Errorf("byte-only clamp: %+v", rep)
	}
	if _, rep := checkText(t, s, Limits{}); rep.Changed {
		t.Errorf("no limits at all changed the text")
	}
	if _, rep := checkText(t, s, Limits{MaxBytes: -5, MaxLines: math.MinInt}); rep.Changed {
		t.Errorf("negative limits changed the text")
	}
}

// TestLargeRealistic is the seed's headline case: a ~300 KB, 6000-line log
// with multi-byte text ends at most 51200 bytes and 2000 lines.
func TestLargeRealistic(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 6000; i++ {
		fmt.Fprintf(&b, "%05d café 中文 🙂 résumé %s\n", i, strings.Repeat("x", 16))
	}
	s := b.String()
	if n := CountLines(s); n != 6000 || len(s) != 300_000 {
		t.Fatalf("fixture has %d lines, %d bytes", n, len(s))
	}
	for _, keep := range allKeeps {
		out, rep := checkText(t, s, Limits{MaxBytes: DefaultMaxBytes, MaxLines: DefaultMaxLines, Keep: keep})
		if !rep.Changed || rep.BytesAfter > 51200 || rep.LinesAfter > 2000 || !utf8.ValidString(out) {
			t.Errorf("%s: %+v", keep, rep)
		}
		if rep.BytesAfter < 50000 {
			t.Errorf("%s: only %d bytes used of 51200", keep, rep.BytesAfter)
		}
	}
}
