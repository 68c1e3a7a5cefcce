package stream

import (
	"bytes"
	"fmt"
	"testing"
)

// decodeAll feeds in the given chunks and returns events plus the flushed tail.
func decodeAll(chunks ...[]byte) []Event {
	var d Decoder
	var evs []Event
	for _, c := range chunks {
		evs = append(evs, d.Feed(c)...)
	}
	if tail := d.Flush(); tail != nil {
		evs = append(evs, *tail)
	}
	return evs
}

func TestDecoderShapes(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string // "name|data|incomplete" per event
	}{
		{"plain", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`|{"a":1}|false`, `|[DONE]|false`}},
		{"crlf", "event: ping\r\ndata: {}\r\n\r\n", []string{`ping|{}|false`}},
		{"lone cr", "data: x\r\rdata: y\r\r", []string{`|x|false`, `|y|false`}},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"|a\nb|false"}},
		{"no space after colon", "data:x\n\n", []string{`|x|false`}},
		{"comment block", ": OPENROUTER PROCESSING\n\n", []string{`||false`}},
		{"comment inside event", ": c\nevent: e\ndata: 1\n\n", []string{`e|1|false`}},
		{"bom", "\xEF\xBB\xBFdata: 1\n\n", []string{`|1|false`}},
		{"unterminated tail", "data: 1\n\ndata: 2\n", []string{`|1|false`, `|2|true`}},
		{"anthropic padding", "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0         }\n\n", []string{`content_block_stop|{"type":"content_block_stop","index":0         }|false`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := decodeAll([]byte(tc.in))
			var got []string
			for _, e := range evs {
				got = append(got, fmt.Sprintf("%s|%s|%v", e.Name, e.Data, e.Incomplete))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			var raw []byte
			for _, e := range evs {
				raw = append(raw, e.Raw...)
			}
			in := bytes.TrimPrefix([]byte(tc.in), bom)
			if !bytes.Equal(raw, in) {
				t.Fatalf("raw bytes %q do not rebuild the input %q", raw, in)
			}
		})
	}
}

// TestDecoderEveryChunking: splitting a stream at every pair of offsets
// (inside "\r\n", inside UTF-8 runes, inside "data:") gives the same events.
func TestDecoderEveryChunking(t *testing.T) {
	in := []byte("event: content_block_delta\r\ndata: {\"text\":\"héllo 中文 🙂\"}\r\n\r\n: keep-alive\n\ndata: a\ndata: b\n\ndata: [DONE]\n\n")
	want := decodeAll(in)
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j += 3 {
			got := decodeAll(in[:i], in[i:j], in[j:])
			if !sameEvents(got, want) {
				t.Fatalf("split at %d,%d: got %d events, want %d", i, j, len(got), len(want))
			}
		}
	}
}

func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Data, b[i].Data) || a[i].HasData != b[i].HasData ||
			a[i].ID != b[i].ID || !bytes.Equal(a[i].Raw, b[i].Raw) || a[i].Incomplete != b[i].Incomplete {
			return false
		}
	}
	return true
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, ev := range []Event{
		Data([]byte(`{"a":1}`)),
		Named("message_start", []byte(`{"type":"message_start"}`)),
		{Name: "x", Data: []byte("l1\nl2"), HasData: true, ID: "7"},
		Data([]byte("[DONE]")),
	} {
		got := decodeAll(Encode(ev))
		if len(got) != 1 || got[0].Name != ev.Name || !bytes.Equal(got[0].Data, ev.Data) || got[0].ID != ev.ID || got[0].Incomplete {
			t.Fatalf("round trip of %+v gave %+v", ev, got)
		}
	}
}

// FuzzDecoder: arbitrary bytes and chunkings never panic, any chunking
// decodes like the whole stream, the raw bytes rebuild the input, and
// decode∘encode is stable.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"), uint8(3))
	f.Add([]byte("event: ping\r\ndata: {}\r\n\r\n: c\r\r"), uint8(1))
	f.Add([]byte("\xEF\xBB\xBFdata: é\xff\n"), uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		want := decodeAll(in)
		n := int(step%17) + 1
		var chunks [][]byte
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		if got := decodeAll(chunks...); !sameEvents(got, want) {
			t.Fatalf("chunking by %d changed the events", n)
		}
		var raw []byte
		for _, e := range want {
			raw = append(raw, e.Raw...)
		}
		if !bytes.Equal(raw, bytes.TrimPrefix(in, bom)) {
			t.Fatal("raw bytes do not rebuild the input")
		}
		for _, e := range want {
			if e.Incomplete || e.IsComment() {
				continue
			}
			again := decodeAll(Encode(e))
			if len(again) != 1 || again[0].Name != e.Name || !bytes.Equal(again[0].Data, e.Data) || again[0].ID != e.ID {
				t.Fatalf("decode(encode(%q)) = %+v", e.Raw, again)
			}
		}
	})
}

// BenchmarkDecoderOneLargeEvent feeds one data event of 1 MiB and of
// 16 MiB in 16 KiB chunks, as Envoy delivers a large upstream event: ns/byte
// must be flat (review finding 11: 8 MiB took 6.7 s, 32 MiB 30 s).
func BenchmarkDecoderOneLargeEvent(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		ev := append(append([]byte("data: "), bytes.Repeat([]byte("x"), size)...), "\n\n"...)
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(ev)))
			for b.Loop() {
				var d Decoder
				n := 0
				for p := ev; len(p) > 0; {
					k := min(len(p), 16<<10)
					n += len(d.Feed(p[:k]))
					p = p[k:]
				}
				if n != 1 {
					b.Fatalf("%d events", n)
				}
			}
		})
	}
}

// BenchmarkDecoderManyEvents: many small events in 16 KiB chunks.
func BenchmarkDecoderManyEvents(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		one := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\r\n\r\n")
		stream := bytes.Repeat(one, size/len(one))
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				var d Decoder
				for p := stream; len(p) > 0; {
					k := min(len(p), 16<<10)
					d.Feed(p[:k])
					p = p[k:]
				}
			}
		})
	}
}
