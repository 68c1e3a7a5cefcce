package testenv

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

type sseEvent struct{ name, data string }

// parseSSE splits a stream into events the way SDK clients do: a blank line ends an event.
func parseSSE(t *testing.T, body []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if cur.data != "" {
		t.Fatal("stream ends inside an event")
	}
	return out
}

func upstreamServer(t *testing.T) (*FakeUpstream, string) {
	u := NewFakeUpstream()
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return u, srv.URL
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestFakeUpstreamDefaults(t *testing.T) {
	_, url := upstreamServer(t)
	tests := []struct {
		name, path, body string
		status           int
		ctype            string
		check            func(t *testing.T, body []byte)
	}{
		{"openai json", "/v1/chat/completions", `{"model":"gpt-x","messages":[]}`, 200, "application/json", func(t *testing.T, b []byte) {
			if gjson.GetBytes(b, "object").String() != "chat.completion" || gjson.GetBytes(b, "model").String() != "gpt-x" ||
				gjson.GetBytes(b, "choices.0.message.content").String() != AnswerText || gjson.GetBytes(b, "choices.0.finish_reason").String() != "stop" {
				t.Errorf("body %s", b)
			}
		}},
		{"openai sse", "/v1/chat/completions", `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true}}`, 200, "text/event-stream; charset=utf-8", func(t *testing.T, b []byte) {
			evs := parseSSE(t, b)
			if evs[len(evs)-1].data != "[DONE]" {
				t.Fatal("no [DONE]")
			}
			var text strings.Builder
			finish := ""
			for _, ev := range evs[:len(evs)-1] {
				if gjson.Get(ev.data, "object").String() != "chat.completion.chunk" || gjson.Get(ev.data, "error").Exists() {
					t.Fatalf("bad chunk %s", ev.data)
				}
				text.WriteString(gjson.Get(ev.data, "choices.0.delta.content").String())
				if f := gjson.Get(ev.data, "choices.0.finish_reason").String(); f != "" {
					finish = f
				}
			}
			if text.String() != AnswerText || finish != "stop" || !gjson.Get(evs[len(evs)-2].data, "usage.total_tokens").Exists() {
				t.Errorf("text %q finish %q last %s", text.String(), finish, evs[len(evs)-2].data)
			}
			if gjson.Get(evs[0].data, "choices.0.delta.role").String() != "assistant" {
				t.Errorf("first chunk %s", evs[0].data)
			}
		}},
		{"anthropic json", "/v1/messages", `{"model":"claude-x","messages":[]}`, 200, "application/json", func(t *testing.T, b []byte) {
			if gjson.GetBytes(b, "type").String() != "message" || gjson.GetBytes(b, "content.0.text").String() != AnswerText ||
				gjson.GetBytes(b, "stop_reason").String() != "end_turn" {
				t.Errorf("body %s", b)
			}
		}},
		{"anthropic sse", "/v1/messages", `{"model":"claude-x","stream":true}`, 200, "text/event-stream; charset=utf-8", func(t *testing.T, b []byte) {
			evs := parseSSE(t, b)
			var names []string
			var text strings.Builder
			for _, ev := range evs {
				if gjson.Get(ev.data, "type").String() != ev.name {
					t.Fatalf("event %s carries type %s", ev.name, gjson.Get(ev.data, "type"))
				}
				if ev.name != "content_block_delta" {
					names = append(names, ev.name)
				}
				text.WriteString(gjson.Get(ev.data, "delta.text").String())
			}
			want := "message_start,content_block_start,ping,ping,content_block_stop,message_delta,message_stop"
			if strings.Join(names, ",") != want || text.String() != AnswerText {
				t.Errorf("events %v text %q", names, text.String())
			}
		}},
		{"unknown path", "/v1/nope", `{}`, 404, "application/json", nil},
		{"not JSON", "/v1/chat/completions", `{"model":`, 400, "application/json", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := post(t, url+tc.path, tc.body)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.ctype {
				t.Fatalf("status %d content-type %q body %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			if !utf8.Valid(b) {
				t.Fatal("body is not UTF-8")
			}
			if tc.status != 200 && !gjson.GetBytes(b, "error.message").Exists() {
				t.Fatalf("error body %s", b)
			}
			if tc.check != nil {
				tc.check(t, b)
			}
		})
	}
}

func TestFakeUpstreamRecordsAndScripts(t *testing.T) {
	u, url := upstreamServer(t)
	post(t, url+"/v1/chat/completions", `{"a":1}`)
	reqs := u.Requests()
	if len(reqs) != 1 || reqs[0].Method != "POST" || reqs[0].Path != "/v1/chat/completions" || string(reqs[0].Body) != `{"a":1}` || reqs[0].ContentLength != 7 {
		t.Fatalf("recorded %+v", reqs)
	}
	u.Reset()
	if len(u.Requests()) != 0 {
		t.Fatal("Reset kept requests")
	}
	u.SetScript(func(r RecordedRequest) *ScriptedResponse {
		if r.Path == "/default" {
			return nil
		}
		return &ScriptedResponse{Status: 201, Header: http.Header{"X-S": {"1"}}, Chunks: [][]byte{[]byte("a"), []byte("b")}, ChunkDelay: time.Millisecond,
			Trailer: http.Header{"X-T": {"done"}}}
	})
	resp, err := http.Post(url+"/anything", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || string(b) != "ab" || resp.Header.Get("X-S") != "1" || resp.Trailer.Get("X-T") != "done" {
		t.Fatalf("scripted response %d %q %v %v", resp.StatusCode, b, resp.Header, resp.Trailer)
	}
	if r, _ := post(t, url+"/default", `{}`); r.StatusCode != 404 {
		t.Fatalf("nil script result should fall back to the default, got %d", r.StatusCode)
	}
}

// The fake upstream rejects a body that does not match its Content-Length.
func TestFakeUpstreamRejectsLengthMismatch(t *testing.T) {
	u, url := upstreamServer(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{}")
	_ = conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if len(u.Requests()) != 1 {
		t.Fatal("rejected requests are recorded too")
	}
}
