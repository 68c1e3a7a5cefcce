package shape

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// joinPairwise is how runs of one role were joined before review round 3
// (N2): two at a time, re-reading everything merged so far on every step.
// It is kept as the reference joinContents must equal.
func joinPairwise(a, b gjson.Result) string {
	if a.IsArray() || b.IsArray() {
		var s strings.Builder
		s.WriteByte('[')
		first := true
		for _, c := range []gjson.Result{a, b} {
			if c.IsArray() {
				c.ForEach(func(_, p gjson.Result) bool {
					if !first {
						s.WriteByte(',')
					}
					first = false
					s.WriteString(p.Raw)
					return true
				})
				continue
			}
			if t := c.String(); t != "" {
				if !first {
					s.WriteByte(',')
				}
				first = false
				s.WriteString(`{"type":"text","text":` + jsonStr(t) + `}`)
			}
		}
		s.WriteByte(']')
		return s.String()
	}
	at, bt := a.String(), b.String()
	switch {
	case at == "":
		return jsonStr(bt)
	case bt == "":
		return jsonStr(at)
	}
	return jsonStr(at + "\n\n" + bt)
}

// One pass over a run gives the bytes the pairwise join gave, for runs of
// strings, empty strings, arrays and nulls in any order.
func TestJoinContentsMatchesPairwise(t *testing.T) {
	kinds := []string{`"alpha"`, `""`, `"line\nwith \"quotes\""`, `[{"type":"text","text":"p"},{"type":"image_url","image_url":{"url":"x"}}]`, `[]`, `null`}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		k := 2 + r.IntN(6)
		cs := make([]gjson.Result, k)
		for i := range cs {
			cs[i] = gjson.Parse(kinds[r.IntN(len(kinds))])
		}
		want := cs[0].Raw
		acc := cs[0]
		for _, c := range cs[1:] {
			want = joinPairwise(acc, c)
			acc = gjson.Parse(want)
		}
		if got := joinContents(cs); got != want {
			t.Fatalf("%v:\n got %s\nwant %s", cs, got, want)
		}
	}
}

// BenchmarkMergeChat: a text-only request of N consecutive user messages
// (about 300 bytes each) costs time linear in N (review round 3, N2: 4,000
// messages took 11 s, 16,000 took 158 s). Report bytes/s with -benchmem.
func BenchmarkMergeChat(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000, 50000} {
		var msgs []string
		for i := range n {
			msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%s}`, jsonStr(fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 24)))))
		}
		body := []byte(`{"model":"m","messages":[` + strings.Join(msgs, ",") + `]}`)
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := TextOnly("openai_chat", body, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
