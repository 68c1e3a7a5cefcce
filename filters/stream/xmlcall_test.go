package stream

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// xmlScanAll feeds the pieces of text and flushes.
func xmlScanAll(parts ...string) []xmlPiece {
	var s xmlScanner
	var out []xmlPiece
	for _, p := range parts {
		out = append(out, s.Feed(p)...)
	}
	return append(out, s.Flush()...)
}

// xmlMerged joins adjacent text pieces, so results of different chunkings
// compare equal.
func xmlMerged(pieces []xmlPiece) []xmlPiece {
	var out []xmlPiece
	for _, p := range pieces {
		if n := len(out); n > 0 && p.Kind == xmlText && out[n-1].Kind == xmlText {
			out[n-1].Text += p.Text
			out[n-1].Raw += p.Raw
			continue
		}
		out = append(out, p)
	}
	return out
}

// xmlShow renders pieces compactly: T"text", C name {args}, F"answer".
func xmlShow(pieces []xmlPiece) string {
	var b strings.Builder
	for i, p := range xmlMerged(pieces) {
		if i > 0 {
			b.WriteString(" | ")
		}
		switch p.Kind {
		case xmlText:
			fmt.Fprintf(&b, "T%q", p.Text)
		case xmlCall:
			fmt.Fprintf(&b, "C %s %s", p.Name, p.Args)
		case xmlFinal:
			fmt.Fprintf(&b, "F%q", p.Text)
		}
	}
	return b.String()
}

func TestXMLScanner(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "hello world", `T"hello world"`},
		{"one call", `Reading.<invoke name="read_file"><parameter name="path">a.go</parameter></invoke>`,
			`T"Reading." | C read_file {"path":"a.go"}`},
		{"multi-line, trimmed", "<invoke name=\"f\">\n  <parameter name=\"p\">\n  two\n  lines \n</parameter>\n</invoke>", `C f {"p":"two\n  lines"}`},
		{"two calls text around", `a<invoke name="f"></invoke>b<invoke name="g"><parameter name="x">1</parameter></invoke>c`,
			`T"a" | C f {} | T"b" | C g {"x":1} | T"c"`},
		{"typed values", `<invoke name="f"><parameter name="n">-1.5e3</parameter><parameter name="b">true</parameter><parameter name="z">null</parameter><parameter name="o">{"a": [1, 2]}</parameter><parameter name="l">[ ]</parameter></invoke>`,
			`C f {"n":-1.5e3,"b":true,"z":null,"o":{"a":[1,2]},"l":[]}`},
		{"untyped values", `<invoke name="f"><parameter name="zero">007</parameter><parameter name="q">"quoted"</parameter><parameter name="two">1 2</parameter><parameter name="md">[link](x)</parameter><parameter name="e"></parameter></invoke>`,
			`C f {"zero":"007","q":"\"quoted\"","two":"1 2","md":"[link](x)","e":""}`},
		{"duplicate last wins", `<invoke name="f"><parameter name="a">1</parameter><parameter name="b">2</parameter><parameter name="a">3</parameter></invoke>`,
			`C f {"a":3,"b":2}`},
		{"html escaping not applied", `<invoke name="f"><parameter name="s">a<b>&c</parameter></invoke>`, `C f {"s":"a<b>&c"}`},
		{"first close ends block", `<invoke name="a"><invoke name="b"></invoke>rest</invoke>`, `C a {} | T"rest</invoke>"`},
		{"unclosed", `x <invoke name="f"><parameter name="a">1</parameter>`, `T"x <invoke name=\"f\"><parameter name=\"a\">1</parameter>"`},
		{"prefix at end", "x <invo", `T"x <invo"`},
		{"not a head", `<invoke name='f'></invoke> <invoke name="f" id="1"></invoke> <invoke name=""></invoke> <invoke  name="f"></invoke>`,
			`T"<invoke name='f'></invoke> <invoke name=\"f\" id=\"1\"></invoke> <invoke name=\"\"></invoke> <invoke  name=\"f\"></invoke>"`},
		{"name with newline", "<invoke name=\"a\nb\"></invoke>", `T"<invoke name=\"a\nb\"></invoke>"`},
		{"bad parameter heads skipped", `<invoke name="f"><parameter name="">x</parameter><parameter name="a" >y</parameter><parameter name="b">z</parameter></invoke>`,
			`C f {"b":"z"}`},
		{"unclosed parameter", `<invoke name="f"><parameter name="a">1</invoke>`, `C f {}`},
		{"final answer param", `Done: <invoke name="final_answer"><parameter name="answer"> 42 </parameter></invoke>`, `T"Done: " | F"42"`},
		{"final answer inner text", "<invoke name=\"final_answer\">\nAll good.\n</invoke>", `F"All good."`},
		{"invalid utf8", "<invoke name=\"f\"><parameter name=\"s\">a\xffb</parameter></invoke>", `C f {"s":"a\ufffdb"}`},
		{"control chars", "<invoke name=\"f\"><parameter name=\"s\">a\x01\tb\u2028c</parameter></invoke>", `C f {"s":"a\u0001\tb\u2028c"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := xmlShow(xmlScanAll(tc.in))
			if want != tc.want {
				t.Fatalf("\ngot  %s\nwant %s", want, tc.want)
			}
			for _, p := range xmlScanAll(tc.in) {
				if p.Kind == xmlCall && !json.Valid([]byte(p.Args)) {
					t.Fatalf("arguments %q are not JSON", p.Args)
				}
			}
			// Any split in two or three gives the same pieces.
			for i := 0; i <= len(tc.in); i++ {
				for j := i; j <= len(tc.in); j += 5 {
					if got := xmlShow(xmlScanAll(tc.in[:i], tc.in[i:j], tc.in[j:])); got != want {
						t.Fatalf("split %d,%d: %s", i, j, got)
					}
				}
			}
		})
	}
}

// Only what could still become a block is held.
func TestXMLScannerHolds(t *testing.T) {
	var s xmlScanner
	steps := []struct{ feed, out string }{
		{"Hello <", `T"Hello "`},
		{"b>", `T"<b>"`},
		{"x <inv", `T"x "`},
		{`oke name="rea`, ``},
		{`d">`, ``},
		{`<parameter name="p">1</parameter></inv`, ``},
		{`oke> tail`, `C read {"p":1} | T" tail"`},
		{" no tags", `T" no tags"`},
	}
	for i, st := range steps {
		if got := xmlShow(s.Feed(st.feed)); got != st.out {
			t.Fatalf("step %d: Feed(%q) = %s, want %s", i, st.feed, got, st.out)
		}
	}
	if !s.Idle() {
		t.Fatal("scanner holds text after a complete block")
	}
	// A head that cannot be a tool name is released without waiting for a quote.
	if got := xmlShow(s.Feed(`<invoke name="` + strings.Repeat("x", xmlMaxName+1))); !strings.HasPrefix(got, `T"<invoke name=`) {
		t.Fatalf("long name held: %s", got)
	}
}

// Feeding a long block in small pieces stays linear (no rescans from the start).
func TestXMLScannerLongBlock(t *testing.T) {
	var s xmlScanner
	if len(s.Feed(`<invoke name="write"><parameter name="content">`)) != 0 {
		t.Fatal("head released")
	}
	for range 20000 {
		if out := s.Feed("abcdefghij"); len(out) != 0 {
			t.Fatal("body released")
		}
	}
	out := s.Feed("</parameter></invoke>")
	if len(out) != 1 || out[0].Kind != xmlCall || len(out[0].Args) != 200000+len(`{"content":""}`) {
		t.Fatalf("got %d pieces", len(out))
	}
}
