package testenv

import (
	"bytes"
	"reflect"
	"testing"
)

func joinChunks(cs [][]byte) []byte { return bytes.Join(cs, nil) }

func TestFixedChunks(t *testing.T) {
	body := []byte("0123456789")
	tests := []struct {
		n    int
		want []string
	}{
		{0, []string{"0123456789"}},
		{1, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}},
		{3, []string{"012", "345", "678", "9"}},
		{10, []string{"0123456789"}},
		{50, []string{"0123456789"}},
	}
	for _, tc := range tests {
		var got []string
		for _, c := range FixedChunks(tc.n)(body) {
			got = append(got, string(c))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("n=%d: got %q", tc.n, got)
		}
	}
	if FixedChunks(3)(nil) != nil {
		t.Error("an empty body should give no chunks")
	}
}

func TestRandomChunks(t *testing.T) {
	body := []byte("data: {\"x\":\"héllo 中文 🙂\"}\r\n\r\n")
	a, b := RandomChunks(42, 5)(body), RandomChunks(42, 5)(body)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different split")
	}
	if !bytes.Equal(joinChunks(a), body) {
		t.Fatal("chunks do not add up to the body")
	}
	for _, c := range a {
		if len(c) < 1 || len(c) > 5 {
			t.Fatalf("chunk of %d bytes outside 1..5", len(c))
		}
	}
	// Small maxima must cut inside runes somewhere: that is their point.
	cutInsideRune := false
	off := 0
	for _, c := range a[:len(a)-1] {
		off += len(c)
		if off < len(body) && body[off]&0xC0 == 0x80 {
			cutInsideRune = true
		}
	}
	if !cutInsideRune {
		t.Error("no split landed inside a UTF-8 rune; pick another seed for this test")
	}
}

func TestDefaultChunker(t *testing.T) {
	emptyTail := 0
	for i := 0; i < 30; i++ {
		body := bytes.Repeat([]byte{byte('a' + i)}, 40000+i)
		cs := defaultChunker(body)
		if !reflect.DeepEqual(cs, defaultChunker(body)) {
			t.Fatal("not deterministic")
		}
		if !bytes.Equal(joinChunks(cs), body) {
			t.Fatal("chunks do not add up to the body")
		}
		for _, c := range cs[:len(cs)-1] {
			if len(c) == 0 || len(c) > defaultChunkMax {
				t.Fatalf("chunk of %d bytes", len(c))
			}
		}
		if len(cs[len(cs)-1]) == 0 {
			emptyTail++
		}
	}
	if emptyTail == 0 || emptyTail == 30 {
		t.Fatalf("%d of 30 bodies ended with an empty chunk; want some but not all", emptyTail)
	}
}

func TestSplitForFilter(t *testing.T) {
	withEmptyTail := Chunker(func(b []byte) [][]byte { return append(FixedChunks(2)(b), []byte{}) })
	withEmptyMiddle := Chunker(func(b []byte) [][]byte { return [][]byte{b[:1], {}, b[1:]} })
	tests := []struct {
		name string
		c    Chunker
		data string
		last bool
		want []chunkPiece
	}{
		{"last chunk carries eos", FixedChunks(2), "abc", true, []chunkPiece{{[]byte("ab"), false}, {[]byte("c"), true}}},
		{"not last", FixedChunks(2), "abc", false, []chunkPiece{{[]byte("ab"), false}, {[]byte("c"), false}}},
		{"empty final chunk", withEmptyTail, "abc", true, []chunkPiece{{[]byte("ab"), false}, {[]byte("c"), false}, {[]byte{}, true}}},
		{"empty tail dropped when not last", withEmptyTail, "abc", false, []chunkPiece{{[]byte("ab"), false}, {[]byte("c"), false}}},
		{"empty chunks inside dropped", withEmptyMiddle, "abc", true, []chunkPiece{{[]byte("a"), false}, {[]byte("bc"), true}}},
		{"nothing left but the end", FixedChunks(2), "", true, []chunkPiece{{[]byte{}, true}}},
	}
	for _, tc := range tests {
		if got := splitForFilter(tc.c, []byte(tc.data), tc.last); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

// FuzzSplitForFilter: whatever the sizes, the chunks add up to the input and only the last one ends
// the stream.
func FuzzSplitForFilter(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\n"), int64(1), 3, true)
	f.Add([]byte(""), int64(2), 1, false)
	f.Fuzz(func(t *testing.T, data []byte, seed int64, max int, last bool) {
		if max > 1<<16 {
			max = 1 << 16
		}
		for _, c := range []Chunker{RandomChunks(seed, max), FixedChunks(max), defaultChunker} {
			ps := splitForFilter(c, data, last)
			var all []byte
			for i, p := range ps {
				all = append(all, p.data...)
				if p.eos != (last && i == len(ps)-1) {
					t.Fatalf("chunk %d of %d: eos=%v (last=%v)", i, len(ps), p.eos, last)
				}
				if len(p.data) == 0 && !p.eos {
					t.Fatal("empty chunk without end of stream")
				}
			}
			if !bytes.Equal(all, data) {
				t.Fatal("chunks do not add up to the input")
			}
		}
	})
}

// FuzzApplyHeaderMutation: any mutation leaves a map with valid lower-case names and values, and
// never touches :authority or :method.
func FuzzApplyHeaderMutation(f *testing.F) {
	f.Add("x-a", "1", "content-length", false, true)
	f.Add(":authority", "evil", "host", true, false)
	f.Add(":status", "99", ":path", false, true)
	f.Fuzz(func(t *testing.T, key, value, remove string, appendValue, response bool) {
		h := hmap(":authority", "a", ":method", "GET", ":path", "/", "x", "1")
		if response {
			h = hmap(":status", "200", "x", "1")
		}
		hm := setHeaders(key, value)
		if appendValue {
			hm.SetHeaders[0] = appendHeader(key, value)
		}
		hm.RemoveHeaders = []string{remove}
		if _, err := applyHeaderMutation(h, hm, mutationOptions{response: response}); err != nil {
			return
		}
		for _, e := range h.entries {
			if !validHeaderName(e.key) || !validHeaderValue(e.value) || e.key != bytesLower(e.key) {
				t.Fatalf("invalid entry %q=%q", e.key, e.value)
			}
		}
		if !response {
			if v, _ := h.get(":authority"); v != "a" {
				t.Fatalf(":authority changed to %q", v)
			}
			if v, _ := h.get(":method"); v != "GET" {
				t.Fatalf(":method changed to %q", v)
			}
		}
	})
}

func bytesLower(s string) string { return string(bytes.ToLower([]byte(s))) }
