package clamp

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzLimits maps fuzzer integers onto limits in a sane range: small enough
// that most inputs get clamped, including sizes below what Validate accepts,
// and 0 for "no limit on this axis".
func fuzzLimits(maxBytes uint16, maxLines uint8, keep uint8) Limits {
	return Limits{
		MaxBytes: int(maxBytes % 2048),
		MaxLines: int(maxLines % 64),
		Keep:     allKeeps[int(keep)%len(allKeeps)],
	}
}

// checkFuzzExtras holds the properties checkApply cannot state in general:
// the clamp never invents a lone '\r' nor a U+FFFD that the input did not
// call for. Each block is its own string (a JSON string or content part on
// the wire), so a block that is not UTF-8 calls for U+FFFD even when the
// blocks' bytes joined would be: "\xce" and "\x9d" are two broken strings,
// not one Ν (FuzzApply split a rune on its separator byte).
func checkFuzzExtras(t *testing.T, in, out []string) {
	joinedIn, joinedOut := strings.Join(in, ""), strings.Join(out, "")
	loneIn := false // judged per block too: "\r" then "\n…" is a lone \r
	for _, b := range in {
		loneIn = loneIn || strings.Count(b, "\r") != strings.Count(b, "\r\n")
	}
	if !loneIn && strings.Count(joinedOut, "\r") != strings.Count(joinedOut, "\r\n") {
		t.Fatalf("lone \\r created: %q -> %q", in, out)
	}
	valid := true
	for _, b := range in {
		valid = valid && utf8.ValidString(b)
	}
	if valid && !strings.ContainsRune(joinedIn, utf8.RuneError) &&
		strings.ContainsRune(joinedOut, utf8.RuneError) {
		t.Fatalf("U+FFFD created from valid input: %q -> %q", in, out)
	}
}

func fuzzSeeds(f *testing.F, add func(s string)) {
	for _, s := range []string{
		"",
		"a",
		"a\nb\nc\n",
		"x\r\ny\r\nz\r\n",
		strings.Repeat("é中🙂\n", 200),
		strings.Repeat("line\n", 300),
		strings.Repeat("0123456789", 300),
		"bad \xff\xfe bytes \xe4\xb8 end\n",
		strings.Repeat("\xff", 3000),
		"\r\r\r\n\n\n",
		genLog(5000),
	} {
		add(s)
	}
}

func FuzzText(f *testing.F) {
	fuzzSeeds(f, func(s string) {
		f.Add(s, uint16(300), uint8(10), uint8(0))
		f.Add(s, uint16(40), uint8(3), uint8(1))
		f.Add(s, uint16(1000), uint8(0), uint8(2))
	})
	f.Fuzz(func(t *testing.T, s string, maxBytes uint16, maxLines uint8, keep uint8) {
		lim := fuzzLimits(maxBytes, maxLines, keep)
		out, _ := checkText(t, s, lim)
		checkFuzzExtras(t, []string{s}, []string{out})
	})
}

func FuzzApply(f *testing.F) {
	fuzzSeeds(f, func(s string) {
		f.Add(s, byte('\n'), uint16(300), uint8(10), uint8(0))
		f.Add(s, byte('|'), uint16(50), uint8(4), uint8(1))
		f.Add(s+"|"+s+"||"+s, byte('|'), uint16(900), uint8(20), uint8(2))
	})
	f.Fuzz(func(t *testing.T, data string, sep byte, maxBytes uint16, maxLines uint8, keep uint8) {
		// Up to 8 blocks, split on a fuzzer-chosen byte.
		in := strings.SplitN(data, string([]byte{sep}), 8)
		lim := fuzzLimits(maxBytes, maxLines, keep)
		out, _ := checkApply(t, in, lim)
		checkFuzzExtras(t, in, out)
	})
}
