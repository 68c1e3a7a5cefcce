package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestDetectDialect(t *testing.T) {
	cases := map[string]Dialect{
		"/v1/chat/completions":                                     OpenAIChat,
		"/v1/chat/completions?api-version=2024-06-01":              OpenAIChat,
		"/api/v1/chat/completions":                                 OpenAIChat,
		"/openai/deployments/gpt4o/chat/completions?api-version=1": OpenAIChat,
		"/v1/messages":                                             Anthropic,
		"/v1/messages/":                                            Anthropic,
		"/v1/messages?beta=true":                                   Anthropic,
		"/v1/messages/count_tokens":                                Anthropic,
		"/v1/models":                                               Unknown,
		"/healthz":                                                 Unknown,
		"/v1/messages/batches":                                     Unknown,
		"":                                                         Unknown,
	}
	for path, want := range cases {
		if got := DetectDialect(path); got != want {
			t.Errorf("DetectDialect(%q) = %q, want %q", path, got, want)
		}
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseFixtures checks discovery on captured provider payloads.
func TestParseFixtures(t *testing.T) {
	cases := []struct {
		file      string
		dialect   Dialect
		results   int
		calls     int
		firstText string
		firstTool string
		form      ContentForm
		stream    bool
	}{
		{"openai-chat-tool-results.request.json", OpenAIChat, 1, 1, `{"status": "success", "gpa_verified": true}`, "extract_student_info", FormString, false},
		{"openai-chat-tool-call-stream.request.json", OpenAIChat, 0, 0, "", "", FormString, true},
		{"anthropic-tool-result.request.json", Anthropic, 1, 1, "The weather is 73f", "", FormBlocks, true},
		{"anthropic-tool-use.request.json", Anthropic, 0, 0, "", "", FormString, true},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			body := readFixture(t, tc.file)
			c, err := Parse(tc.dialect, body)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Results) != tc.results || len(c.Calls) != tc.calls {
				t.Fatalf("results=%d calls=%d, want %d, %d", len(c.Results), len(c.Calls), tc.results, tc.calls)
			}
			if c.Stream != tc.stream {
				t.Errorf("stream = %v, want %v", c.Stream, tc.stream)
			}
			if tc.results == 0 {
				return
			}
			r := c.Results[0]
			if r.Form != tc.form || r.ToolName != tc.firstTool || len(r.Texts) != 1 || r.Texts[0].Text() != tc.firstText {
				t.Fatalf("result = %+v", r)
			}
			// The span must point at exactly the JSON literal of that text.
			lit := body[r.Texts[0].Span.Start:r.Texts[0].Span.End]
			if gjson.ParseBytes(lit).String() != tc.firstText {
				t.Fatalf("span points at %q", lit)
			}
			if got := gjson.GetBytes(body, r.Texts[0].Path).String(); got != tc.firstText {
				t.Fatalf("path %s gives %q", r.Texts[0].Path, got)
			}
		})
	}
}

func TestParseShapes(t *testing.T) {
	cases := []struct {
		name    string
		dialect Dialect
		body    string
		want    []string // texts of all results, blocks joined by "|"
		nonText []int
		isError []bool
		names   []string
	}{
		{
			name:    "openai string, parts, legacy function, null content",
			dialect: OpenAIChat,
			body: `{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"grep","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"a\nb"},
				{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},
				{"role":"assistant","function_call":{"name":"legacy","arguments":"{}"}},
				{"role":"function","name":"legacy","content":"old"},
				{"role":"tool","tool_call_id":"c3","content":null}]}`,
			want:    []string{"a\nb", "x|y", "old"},
			nonText: []int{0, 0, 0},
			isError: []bool{false, false, false},
			names:   []string{"read", "grep", "legacy"},
		},
		{
			name:    "anthropic string, blocks with image, is_error, cache_control",
			dialect: Anthropic,
			body: `{"model":"claude","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"t1","name":"Bash","input":{}},{"type":"tool_use","id":"t2","name":"Read","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"boom","is_error":true,"cache_control":{"type":"ephemeral"}},
				{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"p1"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"text","text":"p2"}]},
				{"type":"text","text":"not a result"}]}]}`,
			want:    []string{"boom", "p1|p2"},
			nonText: []int{0, 1},
			isError: []bool{true, false},
			names:   []string{"Bash", "Read"},
		},
		{
			name:    "anthropic tool_result in an assistant turn is not a result",
			dialect: Anthropic,
			body:    `{"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"x","content":"no"}]},{"role":"user","content":"plain"}]}`,
		},
		{
			name:    "no messages at all",
			dialect: OpenAIChat,
			body:    `{"model":"gpt","input":"hi"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.dialect, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Results) != len(tc.want) {
				t.Fatalf("got %d results, want %d", len(c.Results), len(tc.want))
			}
			for i, r := range c.Results {
				var parts []string
				for _, tb := range r.Texts {
					parts = append(parts, tb.Text())
				}
				if got := strings.Join(parts, "|"); got != tc.want[i] {
					t.Errorf("result %d texts %q, want %q", i, got, tc.want[i])
				}
				if r.NonText != tc.nonText[i] || r.IsError != tc.isError[i] || r.ToolName != tc.names[i] || r.Ordinal != i {
					t.Errorf("result %d = %+v", i, r)
				}
			}
		})
	}
}

func TestParseRejectsNonObjects(t *testing.T) {
	for _, body := range []string{``, `{`, `[1,2]`, `"s"`, `{"a":1}x`, `nul`} {
		if _, err := Parse(OpenAIChat, []byte(body)); err == nil {
			t.Errorf("Parse(%q) succeeded", body)
		}
	}
}

func TestApplyKeepsOtherBytes(t *testing.T) {
	body := readFixture(t, "anthropic-tool-result.request.json")
	c, err := Parse(Anthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	tb := c.Results[0].Texts[0]
	out, err := Apply(body, []Edit{SetString(tb.Span, "clamped <é> \"q\"\n")})
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, tb.Path).String(); got != "clamped <é> \"q\"\n" {
		t.Fatalf("value = %q", got)
	}
	lit := QuoteString("clamped <é> \"q\"\n")
	if !bytes.Equal(out[:tb.Span.Start], body[:tb.Span.Start]) ||
		!bytes.Equal(out[tb.Span.Start+len(lit):], body[tb.Span.End:]) {
		t.Fatal("bytes outside the edit changed")
	}
}

func TestApplyRefusesBadEdits(t *testing.T) {
	body := []byte(`{"a":"xx","b":"yy"}`)
	for name, edits := range map[string][]Edit{
		"overlap":     {{Span: Span{5, 9}, Raw: `"1"`}, {Span: Span{7, 10}, Raw: `"2"`}},
		"range":       {{Span: Span{5, 99}, Raw: `"1"`}},
		"invalid out": {{Span: Span{5, 9}, Raw: `"1`}},
		"inverted":    {{Span: Span{9, 5}, Raw: `"1"`}},
	} {
		if _, err := Apply(body, edits); err == nil {
			t.Errorf("%s: Apply succeeded", name)
		}
	}
	out, err := Apply(body, []Edit{{Span: Span{14, 18}, Raw: `"z"`}, {Span: Span{5, 9}, Raw: `"w"`}})
	if err != nil || string(out) != `{"a":"w","b":"z"}` {
		t.Fatalf("unsorted edits: %s, %v", out, err)
	}
}

func TestQuoteString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        `"plain"`,
		"<a>&":         `"<a>&"`,
		"tab\t\"q\"\\": `"tab\t\"q\"\\"`,
		"bad\xffutf8":  `"bad\ufffdutf8"`,
		"ctl\x01":      `"ctl\u0001"`,
		"\u2028line":   `"\u2028line"`,
		"emoji 🙂 中文":   `"emoji 🙂 中文"`,
	} {
		if got := string(QuoteString(in)); got != want {
			t.Errorf("QuoteString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestDecodedText: what Absorb folds for a SetString edit is what its Raw
// decodes to, so a later filter of a folded run reads what a parse of the
// spliced body would: a byte that starts no rune is one U+FFFD, as
// encoding/json decodes it.
func TestDecodedText(t *testing.T) {
	for _, s := range []string{"plain", "héllo 🙂", "\xb600000000000000000\xa900\xb60000", "x\xe2\x80", "\xe2\x80\xe2\x80y", "\xff\xfe", ""} {
		var want string
		if err := json.Unmarshal(QuoteString(s), &want); err != nil {
			t.Fatalf("QuoteString(%q): %v", s, err)
		}
		if got := decodedText(s); got != want {
			t.Errorf("decodedText(%q) = %q, QuoteString decodes to %q", s, got, want)
		}
	}
}

// FuzzQuoteString: the hand-written quoter writes exactly what
// encoding/json writes with HTML escaping off, for any bytes.
func FuzzQuoteString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "\b\f\n\r\t\x00\x1f\x7f", "<&>", "héllo 🙂", "\u2028\u2029", "\xff\xfe bad", "x\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if want := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(QuoteString(s), want) {
			t.Fatalf("QuoteString(%q) = %s, encoding/json %s", s, QuoteString(s), want)
		}
	})
}

// TestOwnsText: a decoded text may be handed to a store only when it is a
// buffer of its own and not much smaller than that buffer. A literal
// without escapes decodes to a view of the body, which a store must not
// keep; one made of \u escapes decodes to a sixth of its buffer.
func TestOwnsText(t *testing.T) {
	lines := strings.Repeat("PASSED tests/test_x.py::test_case_with_a_long_name\n", 200)
	tests := []struct {
		name string
		raw  string
		want bool
	}{
		{"escaped newlines", string(QuoteString(lines)), true},
		{"no escapes: a view of the literal", `"` + strings.Repeat("plain text ", 500) + `"`, false},
		{"empty", `""`, false},
		{"dense \\u escapes", `"` + strings.Repeat(`\u0001`, 2000) + `"`, false},
		{"short, one escape", `"a\nb"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := TextBlock{Raw: tt.raw}
			text := b.Text()
			if got := b.OwnsText(); got != tt.want {
				t.Fatalf("OwnsText = %v, want %v", got, tt.want)
			}
			var want string
			if err := json.Unmarshal([]byte(tt.raw), &want); err != nil || text != want {
				t.Fatalf("Text = %.40q, want %.40q (%v)", text, want, err)
			}
			b.SetText(text, tt.raw)
			if b.OwnsText() {
				t.Fatal("OwnsText after SetText: an earlier filter's text may be a view of anything")
			}
		})
	}
}
