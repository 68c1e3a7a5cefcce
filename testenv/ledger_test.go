package testenv

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

func ledgerReq(d wire.Dialect, path, key string, body []byte) RecordedRequest {
	return RecordedRequest{Method: http.MethodPost, Path: path, Header: http.Header{"X-Api-Key": {key}}, Body: body}
}

// TestLedgerAnthropicBreakpoints: a conversation grows by one tool
// exchange a turn, each tool_result a breakpoint. Turn 1 writes its
// prefix; turn 2 reads it back and writes only the new exchange; a
// changed old result breaks the prefix from there on.
func TestLedgerAnthropicBreakpoints(t *testing.T) {
	outs := []string{strings.Repeat("a", 8000), strings.Repeat("b", 8000), strings.Repeat("c", 8000)}
	l := NewLedger()
	b1, ok := l.Charge(ledgerReq(wire.Anthropic, "/v1/messages", "k", wiretest.Request(wire.Anthropic, outs[:2]...)))
	if !ok || b1.CacheRead != 0 || b1.CacheWrite == 0 {
		t.Fatalf("turn 1 %+v", b1)
	}
	b2, _ := l.Charge(ledgerReq(wire.Anthropic, "/v1/messages", "k", wiretest.Request(wire.Anthropic, outs...)))
	if b2.CacheRead != b1.CacheRead+b1.CacheWrite || b2.CacheWrite == 0 || b2.CacheWrite > 2100 {
		t.Fatalf("turn 2 %+v after %+v", b2, b1)
	}
	// Another caller shares nothing.
	if b, _ := l.Charge(ledgerReq(wire.Anthropic, "/v1/messages", "other", wiretest.Request(wire.Anthropic, outs...))); b.CacheRead != 0 {
		t.Fatalf("another caller read the cache: %+v", b)
	}
	// The first result rewritten: only the units before it are read.
	changed := []string{"short", outs[1], outs[2]}
	b3, _ := l.Charge(ledgerReq(wire.Anthropic, "/v1/messages", "k", wiretest.Request(wire.Anthropic, changed...)))
	if b3.CacheRead != 0 || b3.CacheWrite == 0 {
		t.Fatalf("after a rewrite %+v", b3)
	}
	if got := l.Total(wire.Anthropic); got.Prompt() != b1.Prompt()+b2.Prompt()+b2.Prompt()+b3.Prompt() || got.Output != 4*12 {
		t.Fatalf("total %+v", got)
	}
}

func TestLedgerOpenAIAutomatic(t *testing.T) {
	outs := []string{strings.Repeat("a", 8000), strings.Repeat("b", 8000)}
	l := NewLedger()
	b1, _ := l.Charge(ledgerReq(wire.OpenAIChat, "/v1/chat/completions", "k", wiretest.Request(wire.OpenAIChat, outs[:1]...)))
	b2, _ := l.Charge(ledgerReq(wire.OpenAIChat, "/v1/chat/completions", "k", wiretest.Request(wire.OpenAIChat, outs...)))
	if b1.CacheRead != 0 || b1.CacheWrite != 0 || b2.CacheWrite != 0 {
		t.Fatalf("%+v %+v", b1, b2)
	}
	// The whole first request is a prefix of the second but for its last
	// unit boundaries; reads come in 128-token steps past 1024.
	if b2.CacheRead < 1024 || (b2.CacheRead-1024)%128 != 0 || b2.CacheRead > b1.Prompt() {
		t.Fatalf("turn 2 read %d of a %d-token first turn", b2.CacheRead, b1.Prompt())
	}
}

// TestLedgerWrap: the canned answers carry the bill in each dialect's
// fields, JSON and SSE.
func TestLedgerWrap(t *testing.T) {
	l := &Ledger{MinCacheTokens: 1}
	script := l.Wrap(nil)
	body := wiretest.Request(wire.Anthropic, "x")
	for _, stream := range []bool{false, true} {
		b := body
		if !stream {
			b = bytes.Replace(b, []byte(`"stream":true`), []byte(`"stream":false`), 1)
		}
		sr := script(ledgerReq(wire.Anthropic, "/v1/messages", "k", b))
		bill := l.Charges()[len(l.Charges())-1].Bill
		all := sr.Body
		for _, c := range sr.Chunks {
			all = append(all, c...)
		}
		want := `"cache_creation_input_tokens":` + itoa64(bill.CacheWrite)
		if !bytes.Contains(all, []byte(want)) {
			t.Fatalf("stream=%v: %s not in %s", stream, want, all)
		}
		if !stream && gjson.GetBytes(sr.Body, "usage.output_tokens").Int() != 12 {
			t.Fatalf("output not billed: %s", sr.Body)
		}
	}
	oa := wiretest.Request(wire.OpenAIChat, "y")
	sr := script(ledgerReq(wire.OpenAIChat, "/v1/chat/completions", "k", bytes.Replace(oa, []byte(`"stream":true`), []byte(`"stream":false`), 1)))
	bill := l.Charges()[len(l.Charges())-1].Bill
	if gjson.GetBytes(sr.Body, "usage.prompt_tokens").Int() != bill.Prompt() || sr.Header.Get("Content-Length") != itoa64(int64(len(sr.Body))) {
		t.Fatalf("openai %s / %+v", sr.Body, bill)
	}
	// A stream the client did not ask usage for stays without it.
	sr = script(ledgerReq(wire.OpenAIChat, "/v1/chat/completions", "k", oa))
	for _, c := range sr.Chunks {
		if bytes.Contains(c, []byte(`"prompt_tokens"`)) {
			t.Fatal("usage chunk added")
		}
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
