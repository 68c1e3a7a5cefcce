package overflow

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

const tenant = "0123456789abcdef0123456789abcdef"

// testKeys derives ids as a server would, under the empty test secret.
var testKeys shadow.Keyring

func idFunc(o string) string { return testKeys.ID(tenant, []byte(o)) }

// run applies f to body through the pipeline, as the proxy would, and checks
// what every rewrite must keep: valid JSON, the provider's pairing rules,
// and untouched bytes outside tool result values.
func run(t *testing.T, f pipeline.Filter, path string, body []byte) ([]byte, pipeline.Report) {
	t.Helper()
	ep := wire.Detect(path, body)
	out, rep, err := pipeline.New(f).RunEndpoint(ep, body)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !gjson.ValidBytes(out) {
		t.Fatalf("output is not valid JSON")
	}
	if err := wiretest.CheckPairing(ep.Dialect, body); err == nil {
		if err := wiretest.CheckPairing(ep.Dialect, out); err != nil {
			t.Fatalf("pairing broken: %v", err)
		}
	}
	before, err := wire.ParseEndpoint(ep, body)
	if err != nil {
		t.Fatal(err)
	}
	after, err := wire.ParseEndpoint(ep, out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(wiretest.Outside(body, wiretest.ValueSpans(before)), wiretest.Outside(out, wiretest.ValueSpans(after)), bytes.Equal) {
		t.Fatalf("bytes outside tool result values changed")
	}
	return out, rep
}

// values returns every tool result value of body: decoded text for text
// blocks, raw JSON for JSON blocks, in result order.
func values(t *testing.T, path string, body []byte) []string {
	t.Helper()
	c, err := wire.ParseEndpoint(wire.Detect(path, body), body)
	if err != nil {
		t.Fatal(err)
	}
	var v []string
	for _, r := range c.Results {
		for _, tb := range r.Texts {
			v = append(v, tb.Text())
		}
		for _, j := range r.JSON {
			v = append(v, j.Raw)
		}
	}
	return v
}

func trunc(s string, max int, ref bool) string {
	n := utf8.RuneCountInString(s)
	var head string
	if ref {
		head = shadow.Reference(idFunc(s), len(s), "")
	}
	// The reference and the marker count inside the limit.
	keep := max - utf8.RuneCountInString(head) - utf8.RuneCountInString("… [truncated "+fmt.Sprint(n)+" chars]")
	if keep < 64 {
		keep = 64
	}
	return head + prefixRunes(s, keep) + "… [truncated " + fmt.Sprint(n-keep) + " chars]"
}

func TestTruncateTextExact(t *testing.T) {
	x1000 := strings.Repeat("x", 1000)
	cases := []struct {
		name, in, want string
		ref            bool
	}{
		{"ascii", x1000, strings.Repeat("x", 488) + "… [truncated 512 chars]", false},
		{"ascii_ref", x1000, trunc(x1000, 512, true), true},
		{"at_limit", strings.Repeat("x", 512), strings.Repeat("x", 512), false},
		{"one_over", strings.Repeat("x", 513), strings.Repeat("x", 489) + "… [truncated 24 chars]", false},
		// Multi-byte text at the 512 boundary: code points, not bytes or
		// UTF-16 units, so 512 CJK characters (1536 bytes) stay whole and
		// 512 emoji (1024 UTF-16 units in JavaScript) do too.
		{"cjk_at_limit", strings.Repeat("中", 512), strings.Repeat("中", 512), false},
		{"emoji_at_limit", strings.Repeat("🙂", 512), strings.Repeat("🙂", 512), false},
		{"cjk_over", strings.Repeat("中", 600), trunc(strings.Repeat("中", 600), 512, false), false},
		{"mixed_boundary", strings.Repeat("a", 511) + "🙂é" + strings.Repeat("z", 10), trunc(strings.Repeat("a", 511)+"🙂é"+strings.Repeat("z", 10), 512, false), false},
		// Control characters are kept (QuoteString escapes them).
		{"controls", strings.Repeat("\x00\x01\x1b[31m", 200), trunc(strings.Repeat("\x00\x01\x1b[31m", 200), 512, false), false},
		// Arrays and scalars take the text path, as in llxprt.
		{"array", "[" + strings.Repeat(`"item",`, 100) + `"end"]`, trunc("["+strings.Repeat(`"item",`, 100)+`"end"]`, 512, false), false},
		{"string_scalar", `"` + strings.Repeat("s", 600) + `"`, trunc(`"`+strings.Repeat("s", 600)+`"`, 512, false), false},
		{"number_scalar", strings.Repeat("7", 600), trunc(strings.Repeat("7", 600), 512, true), true},
		{"broken_json", `{"result":"` + strings.Repeat("r", 600), trunc(`{"result":"`+strings.Repeat("r", 600), 512, false), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := TruncateOptions{}
			if c.ref {
				o.ID = idFunc
			}
			r := NewTruncateRung(o)
			body := wiretest.Request(wire.OpenAIChat, c.in)
			out, rep := run(t, r, wiretest.Path(wire.OpenAIChat), body)
			got := values(t, wiretest.Path(wire.OpenAIChat), out)[0]
			if got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("invalid UTF-8")
			}
			changed := c.in != c.want
			if rep.Changed() != changed {
				t.Fatalf("Changed() = %t, want %t", rep.Changed(), changed)
			}
			if kept := r.Kept(); c.ref && changed {
				if len(kept) != 1 || kept[0].Original != c.in || kept[0].ID != idFunc(c.in) {
					t.Fatalf("kept = %+v", kept)
				}
				id, size, rest, ok := shadow.ParseReference(got)
				if !ok || id != kept[0].ID || size != len(c.in) || !strings.HasPrefix(c.in, rest[:strings.LastIndex(rest, "… [truncated ")]) || utf8.RuneCountInString(got) > 512 {
					t.Fatalf("reference: %q %d %t", id, size, ok)
				}
			} else if len(kept) != 0 {
				t.Fatalf("kept without a reference: %d", len(kept))
			}
		})
	}
}

func TestTruncateJSONObjectExact(t *testing.T) {
	big := strings.Repeat("line of file content\n", 40) // 840 chars
	payload := `{"status":"success","toolName":"read_file","result":` + string(wire.QuoteString(big)) + `}`
	n := utf8.RuneCountInString(payload)
	omitted := fmt.Sprintf("[omitted %d chars due to provider limits]", n)

	noResult := `{"ok": true, "data": ` + string(wire.QuoteString(big)) + "}"
	nn := utf8.RuneCountInString(noResult)

	replaced := `{"truncated":false,"result":` + string(wire.QuoteString(big)) + `,"originalLength":1}`
	nr := utf8.RuneCountInString(replaced)

	id := idFunc(payload)
	cases := []struct {
		name, in, want string
		ref            bool
	}{
		{"llxprt_payload", payload,
			`{"status":"success","toolName":"read_file","result":"` + omitted + `","truncated":true,"originalLength":` + fmt.Sprint(n) + `}`, false},
		{"llxprt_payload_ref", payload,
			`{"status":"success","toolName":"read_file","result":"` + omitted + `","truncated":true,"originalLength":` + fmt.Sprint(n) +
				`,"shadow_id":"` + id + `","expand_hint":"call expand_context with {\"id\":\"` + id + `\"} to read the full original"}`, true},
		// No "result" member: it is appended; member order and the
		// original spacing are kept.
		{"result_appended", noResult,
			`{"ok": true, "data": ` + string(wire.QuoteString(big)) + fmt.Sprintf(`,"result":"[omitted %d chars due to provider limits]","truncated":true,"originalLength":%d}`, nn, nn), false},
		// Existing truncated/originalLength members are replaced in place.
		{"replaces_members", replaced,
			fmt.Sprintf(`{"truncated":true,"result":"[omitted %d chars due to provider limits]","originalLength":%d}`, nr, nr), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := TruncateOptions{}
			if c.ref {
				o.ID = idFunc
			}
			r := NewTruncateRung(o)
			out, _ := run(t, r, wiretest.Path(wire.OpenAIChat), wiretest.Request(wire.OpenAIChat, c.in))
			got := values(t, wiretest.Path(wire.OpenAIChat), out)[0]
			if got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			if c.ref {
				if k := r.Kept(); len(k) != 1 || k[0].ID != id || k[0].Original != c.in {
					t.Fatalf("kept = %+v", k)
				}
			}
		})
	}
}

func TestTruncateDialects(t *testing.T) {
	long := wiretest.LongOutput(3000) // multi-byte lines
	short := "ok"
	obj := `{"result":` + string(wire.QuoteString(long)) + `,"exit_code":1}`
	anthString := func(a, b string) []byte {
		return []byte(`{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Fix it."},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}},{"type":"tool_use","id":"toolu_02","name":"Read","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":` + string(wire.QuoteString(a)) + `,"is_error":true},` +
			`{"type":"tool_result","tool_use_id":"toolu_02","content":` + string(wire.QuoteString(b)) + `}]}]}`)
	}
	cases := []struct {
		name  string
		d     wire.Dialect
		body  []byte
		wants []string // per value, in order
	}{
		{"openai_chat", wire.OpenAIChat, wiretest.Request(wire.OpenAIChat, long, short, obj), []string{"text", "", "object"}},
		{"responses", wire.OpenAIResponses, wiretest.Request(wire.OpenAIResponses, long, short, obj), []string{"text", "", "object"}},
		{"anthropic_blocks", wire.Anthropic, wiretest.Request(wire.Anthropic, long, short, obj), []string{"text", "", "object"}},
		{"anthropic_string_error", wire.Anthropic, anthString(long, obj), []string{"text", "object"}},
		// Gemini responses are objects: {"output": long, "exit_code": 1}.
		{"gemini", wire.Gemini, wiretest.Request(wire.Gemini, long, short), []string{"json", ""}},
		// Bedrock: a text block and a json block per result.
		{"bedrock", wire.Bedrock, wiretest.Request(wire.Bedrock, long, short), []string{"text", "json", "", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := wiretest.Path(c.d)
			r := NewTruncateRung(TruncateOptions{ID: idFunc, Tool: "expand_context"})
			in := values(t, path, c.body)
			out, rep := run(t, r, path, c.body)
			got := values(t, path, out)
			if len(got) != len(in) || len(in) != len(c.wants) {
				t.Fatalf("values: %d in, %d out, %d wanted", len(in), len(got), len(c.wants))
			}
			var wantKept []Kept
			for i, w := range c.wants {
				switch w {
				case "":
					if got[i] != in[i] {
						t.Errorf("value %d changed", i)
					}
				case "text":
					if got[i] != trunc(in[i], 512, true) {
						t.Errorf("value %d: %q", i, got[i])
					}
					wantKept = append(wantKept, Kept{idFunc(in[i]), in[i]})
				case "object", "json":
					v := gjson.Parse(got[i])
					n := utf8.RuneCountInString(in[i])
					if !v.IsObject() || !v.Get("truncated").Bool() || v.Get("originalLength").Int() != int64(n) ||
						v.Get("result").String() != fmt.Sprintf("[omitted %d chars due to provider limits]", n) ||
						v.Get("shadow_id").String() != idFunc(in[i]) || !strings.Contains(v.Get("expand_hint").String(), idFunc(in[i])) {
						t.Errorf("value %d: %s", i, got[i])
					}
					// Every original member is still there.
					gjson.Parse(in[i]).ForEach(func(k, val gjson.Result) bool {
						if k.String() != "result" && v.Get(gjson.Escape(k.String())).Raw != val.Raw {
							t.Errorf("value %d lost member %s", i, k)
						}
						return true
					})
					wantKept = append(wantKept, Kept{idFunc(in[i]), in[i]})
				}
			}
			if !slices.Equal(r.Kept(), wantKept) {
				t.Errorf("kept %d values, want %d", len(r.Kept()), len(wantKept))
			}
			for _, ch := range rep.Changes {
				if ch.Filter != "overflow_truncate" || ch.BytesAfter >= ch.BytesBefore && !strings.Contains(ch.Detail, "json") {
					t.Errorf("change: %+v", ch)
				}
			}
		})
	}
}

func TestTruncateKeptResets(t *testing.T) {
	r := NewTruncateRung(TruncateOptions{ID: idFunc})
	long := strings.Repeat("é", 700)
	body := wiretest.Request(wire.OpenAIChat, long, long)
	run(t, r, wiretest.Path(wire.OpenAIChat), body)
	k := r.Kept()
	if len(k) != 2 || k[0] != k[1] || k[0].ID != testKeys.ID(tenant, []byte(long)) || !shadow.ValidID(k[0].ID) {
		t.Fatalf("kept = %v", k)
	}
	k[0].ID = "mutated"
	if r.Kept()[0].ID == "mutated" {
		t.Fatalf("Kept shares its slice")
	}
	run(t, r, wiretest.Path(wire.OpenAIChat), wiretest.Request(wire.OpenAIChat, "short"))
	if len(r.Kept()) != 0 {
		t.Fatalf("Kept not reset by Rewrite")
	}
	// Same conversation, same edits (prompt caches depend on it).
	c1, _ := wire.Parse(wire.OpenAIChat, body)
	c2, _ := wire.Parse(wire.OpenAIChat, body)
	e1, _ := r.Rewrite(c1)
	e2, _ := r.Rewrite(c2)
	if !slices.EqualFunc(e1, e2, func(a, b wire.Edit) bool { return a.Span == b.Span && a.Raw == b.Raw }) {
		t.Fatalf("Rewrite is not deterministic")
	}
}

func TestTruncateOptions(t *testing.T) {
	r := NewTruncateRung(TruncateOptions{MaxChars: 10, ID: idFunc, Tool: "fetch_original"})
	if r.Name() != "overflow_truncate" {
		t.Fatal(r.Name())
	}
	in := "0123456789abcdef"
	out, _ := run(t, r, wiretest.Path(wire.OpenAIChat), wiretest.Request(wire.OpenAIChat, in))
	got := values(t, wiretest.Path(wire.OpenAIChat), out)[0]
	want := shadow.Reference(idFunc(in), 16, "fetch_original") + "0123456789… [truncated 6 chars]"
	if got != want {
		t.Fatalf("got %q", got)
	}
	// An ID function returning "" writes no reference and keeps nothing.
	r = NewTruncateRung(TruncateOptions{MaxChars: 10, ID: func(string) string { return "" }})
	out, _ = run(t, r, wiretest.Path(wire.OpenAIChat), wiretest.Request(wire.OpenAIChat, in))
	if got := values(t, wiretest.Path(wire.OpenAIChat), out)[0]; got != "0123456789… [truncated 6 chars]" || len(r.Kept()) != 0 {
		t.Fatalf("got %q, kept %d", got, len(r.Kept()))
	}
}

// A non-object JSON block stays as it is: the provider needs the same kind.
func TestTruncateJSONBlockArrayUntouched(t *testing.T) {
	arr := "[" + strings.Repeat(`"row",`, 200) + `"end"]`
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"go"}]},` +
		`{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"q","input":{}}}]},` +
		`{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"json":` + arr + `}]}}]}]}`)
	path := wiretest.Path(wire.Bedrock)
	out, rep := run(t, NewTruncateRung(TruncateOptions{ID: idFunc}), path, body)
	if rep.Changed() || !bytes.Equal(out, body) {
		t.Fatalf("array JSON block was rewritten")
	}
}

func TestAllowances(t *testing.T) {
	cases := []struct {
		name   string
		sizes  []int
		budget int
		want   []int
	}{
		{"under", []int{100, 200}, 10_000, []int{100, 200}},
		{"one_big", []int{100, 50_000}, 10_000, []int{100, 9_900}},
		// Even share 10000: the 1000-byte result keeps its bytes, the two
		// big ones split the remaining 29000.
		{"aggregate", []int{1_000, 50_000, 50_000}, 30_000, []int{1_000, 14_500, 14_500}},
		// Two results under the first even share (25000/4 = 6250), the
		// share of the rest grows to (25000-500-7000)/2 = 8750, then the
		// 8000 one fits too and the last gets 25000-500-7000-8000.
		{"water_level", []int{500, 7_000, 8_000, 90_000}, 25_000, []int{500, 7_000, 8_000, 9_500}},
		{"per_result_cap", []int{40_000}, 10_000, []int{10_000}},
		// The 2 KiB floor wins over the aggregate.
		{"floor", []int{5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000, 5_000}, 10_000,
			[]int{2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048}},
		{"floor_keeps_small", []int{100, 9_000, 9_000}, 1, []int{100, 2048, 2048}},
		{"empty", nil, 10_000, []int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Allowances(c.sizes, c.budget)
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestClampRung(t *testing.T) {
	small := strings.Repeat("ok\n", 100) // 300 bytes
	big1 := wiretest.LongOutput(40_000)
	big2 := wiretest.LongOutput(25_000)
	const budget = 20_000
	for _, d := range wire.Dialects {
		t.Run(string(d), func(t *testing.T) {
			f := NewClampRung(budget, clamp.KeepHeadTail)
			if f.Name() != "overflow_clamp" {
				t.Fatal(f.Name())
			}
			path := wiretest.Path(d)
			body := wiretest.Request(d, small, big1, big2)
			c, err := wire.ParseEndpoint(wire.Detect(path, body), body)
			if err != nil {
				t.Fatal(err)
			}
			sizes := make([]int, len(c.Results))
			for i := range c.Results {
				sizes[i] = resultBytes(&c.Results[i])
			}
			allow := Allowances(sizes, budget)
			out, rep := run(t, f, path, body)
			c2, _ := wire.ParseEndpoint(wire.Detect(path, out), out)
			total := 0
			for i := range c2.Results {
				n := resultBytes(&c2.Results[i])
				total += n
				if sizes[i] <= allow[i] {
					if n != sizes[i] {
						t.Errorf("result %d under its share changed: %d → %d", i, sizes[i], n)
					}
					continue
				}
				// JSON blocks get at least 1 KiB, as in the clamp filter.
				slack := 1024 * len( // clamp.Result gives each JSON block at least 1 KiB
					c2.Results[i].JSON)
				if n > allow[i]+slack {
					t.Errorf("result %d: %d bytes, allowance %d", i, n, allow[i])
				}
			}
			if d != wire.Bedrock && total > budget {
				t.Errorf("total %d > budget %d", total, budget)
			}
			if len(rep.Changes) != 2 {
				t.Errorf("changes: %d", len(rep.Changes))
			}
			for _, ch := range rep.Changes {
				if ch.Filter != "overflow_clamp" || ch.BytesAfter >= ch.BytesBefore {
					t.Errorf("change: %+v", ch)
				}
			}
			for _, v := range values(t, path, out) {
				if !utf8.ValidString(v) {
					t.Errorf("invalid UTF-8")
				}
			}
		})
	}
}

func TestClampRungLinesUnlimited(t *testing.T) {
	many := strings.Repeat("\n", 5000) // 5000 lines, 5000 bytes
	out, rep := run(t, NewClampRung(10_000, ""), wiretest.Path(wire.OpenAIChat), wiretest.Request(wire.OpenAIChat, many))
	if rep.Changed() || values(t, wiretest.Path(wire.OpenAIChat), out)[0] != many {
		t.Fatalf("line count clamped a result under the byte budget")
	}
	// Keep tail: the end survives.
	text := strings.Repeat("head\n", 1000) + "THE END"
	out, _ = run(t, NewClampRung(100, clamp.KeepTail), wiretest.Path(wire.OpenAIChat), wiretest.Request(wire.OpenAIChat, text))
	got := values(t, wiretest.Path(wire.OpenAIChat), out)[0]
	if len(got) > minRungBytes || !strings.HasSuffix(got, "THE END") {
		t.Fatalf("tail: %d bytes, %q", len(got), got[max(0, len(got)-20):])
	}
}

// Raw bytes that are not UTF-8 inside a JSON block's strings come out as
// U+FFFD, as the text path's quoting writes them.
func TestTruncateJSONBlockInvalidUTF8(t *testing.T) {
	body := wiretest.Request(wire.Gemini, strings.Repeat("x", 600))
	body = bytes.Replace(body, []byte("xxxx"), []byte("x\xffx"), 1)
	if !gjson.ValidBytes(body) || utf8.Valid(body) {
		t.Skip("gjson rejects raw invalid UTF-8 in strings")
	}
	path := wiretest.Path(wire.Gemini)
	out, rep := run(t, NewTruncateRung(TruncateOptions{}), path, body)
	if !rep.Changed() || !utf8.Valid(out) {
		t.Fatalf("changed=%t valid=%t", rep.Changed(), utf8.Valid(out))
	}
}
