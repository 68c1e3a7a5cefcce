package overflow

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

// FuzzRungs: arbitrary bodies in every dialect never panic, valid JSON stays
// valid, and every value a rung changes stays within that rung's bound.
func FuzzRungs(f *testing.F) {
	long := wiretest.LongOutput(3000)
	obj := `{"status":"error","result":` + string(wire.QuoteString(long)) + `}`
	for i := range wire.Dialects {
		f.Add(wiretest.Request(wire.Dialects[i], long, "ok", obj), uint8(i), uint16(512), uint16(3000))
		f.Add(wiretest.Request(wire.Dialects[i], strings.Repeat("中🙂\x00", 300)), uint8(i), uint16(7), uint16(0))
	}
	f.Add([]byte(`{"messages":[{"role":"tool","tool_call_id":"a","content":" {\"result\":1, \"x\":\"`+strings.Repeat("y", 600)+`\"} "}]}`), uint8(0), uint16(0), uint16(1))
	f.Add([]byte(`{"messages":[`), uint8(0), uint16(1), uint16(1))
	// Hostile shapes: nesting past the depth guard, and a duplicate key.
	f.Add([]byte(`{"messages":`+strings.Repeat("[", 100_000)), uint8(0), uint16(1), uint16(1))
	f.Add([]byte(`{"messages":[{"role":"tool","tool_call_id":"a","content":"x","content":"`+strings.Repeat("y", 900)+`"}]}`), uint8(0), uint16(16), uint16(16))
	f.Fuzz(func(t *testing.T, body []byte, di uint8, maxChars, budget uint16) {
		d := wire.Dialects[int(di)%len(wire.Dialects)]
		ep := wire.Endpoint{Dialect: d}
		tr := NewTruncateRung(TruncateOptions{MaxChars: int(maxChars), ID: func(o string) string { return testKeys.ID("t", []byte(o)) }})
		for _, rung := range []pipeline.Filter{tr, NewClampRung(int(budget), clamp.KeepHeadTail)} {
			out, _, err := pipeline.New(rung).RunEndpoint(ep, body)
			if errors.Is(err, pipeline.ErrInternal) {
				t.Fatalf("%s: %v", rung.Name(), err)
			}
			if err != nil && !errors.Is(err, wire.ErrNotJSON) && !errors.Is(err, wire.ErrTooDeep) && !errors.Is(err, wire.ErrDuplicateKey) {
				t.Fatalf("%s: edits refused: %v", rung.Name(), err)
			}
			if jsonsafe.Valid(body) && !jsonsafe.Valid(out) {
				t.Fatalf("%s: valid JSON became invalid", rung.Name())
			}
			c, err := wire.ParseEndpoint(ep, body)
			if err != nil {
				continue
			}
			orig := map[wire.Span]string{}
			isText := map[wire.Span]bool{}
			for _, r := range c.Results {
				for _, tb := range r.Texts {
					orig[tb.Span], isText[tb.Span] = tb.Text(), true
				}
				for _, j := range r.JSON {
					orig[j.Span] = j.Raw
				}
			}
			edits, _ := rung.Rewrite(c)
			for _, e := range edits {
				before, ok := orig[e.Span]
				if !ok {
					t.Fatalf("%s: edit outside a tool result value", rung.Name())
				}
				v := gjson.Parse(e.Raw)
				after := e.Raw
				if isText[e.Span] {
					if v.Type != gjson.String {
						t.Fatalf("%s: text value became %s", rung.Name(), v.Type)
					}
					after = v.String()
				} else if gjson.Parse(before).IsObject() && !v.IsObject() {
					t.Fatalf("%s: JSON object block changed kind", rung.Name())
				}
				if !utf8.ValidString(after) {
					t.Fatalf("%s: invalid UTF-8", rung.Name())
				}
				switch r := rung.(type) {
				case *TruncateRung:
					n := utf8.RuneCountInString(after)
					if isText[e.Span] && !isObject(before) {
						// reference lines + MaxChars code points + marker
						if n > r.max+64+len(shadow.Reference(testKeys.ID("t", nil), len(before), r.tool)) {
							t.Fatalf("truncate: %d code points, max %d", n, r.max)
						}
					} else if len(after) > len(before)+512 {
						t.Fatalf("truncate: object grew from %d to %d bytes", len(before), len(after))
					}
				case *ClampRung:
					if len(after) > r.budget {
						t.Fatalf("clamp: value of %d bytes over budget %d", len(after), r.budget)
					}
				}
			}
		}
	})
}
