package stream

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/wire"
)

// ---- helpers ------------------------------------------------------------

// gateRec is a Recoverer answering with a canned body (one byte per Read)
// or refusing; it records what it was asked.
type gateRec struct {
	body     string
	refuse   bool
	panics   bool
	verdicts []overflow.Verdict
	closed   int
}

type gateBody struct {
	io.Reader
	r *gateRec
}

func (b *gateBody) Close() error { b.r.closed++; return nil }

func (r *gateRec) Recover(v overflow.Verdict) (io.ReadCloser, error) {
	r.verdicts = append(r.verdicts, v)
	if r.panics {
		panic("recoverer panics")
	}
	if r.refuse {
		return nil, errTestRefused
	}
	return &gateBody{Reader: &expOneByte{b: []byte(r.body)}, r: r}, nil
}

// gateNewInner makes the normalizer chain of dialect d with deterministic
// call ids; nil for dialects without one.
func gateNewInner(d wire.Dialect, xml, usage bool) Normalizer {
	opts := Options{XMLToolCalls: xml, IncludeUsage: usage, NewCallID: oaiTestIDs()}
	switch d {
	case wire.OpenAIChat:
		return NewOpenAIChat(opts)
	case wire.Anthropic:
		return NewAnthropic(opts)
	case wire.OpenAIResponses:
		return NewOpenAIResponses(opts)
	}
	return nil
}

// gateAlone is inner alone on the same chunks (nil inner: the input).
func gateAlone(d wire.Dialect, xml, usage bool, chunks [][]byte) []byte {
	n := gateNewInner(d, xml, usage)
	var out []byte
	for _, c := range chunks {
		if n == nil {
			out = append(out, c...)
		} else {
			out = append(out, n.Write(c)...)
		}
	}
	if n != nil {
		out = append(out, n.Close()...)
	}
	return out
}

// gateAloneParts is inner alone on b: what its Writes and its Close return.
func gateAloneParts(d wire.Dialect, b []byte) (writes, closed []byte) {
	n := gateNewInner(d, false, true)
	if n == nil {
		return b, nil
	}
	return n.Write(b), n.Close()
}

// gateRun feeds chunks through a gate; client is what the client gets in
// order (emitted bytes before what the call returned), returned what the
// calls returned.
func gateRun(d wire.Dialect, xml, usage bool, r Recoverer, chunks [][]byte, useEmit bool) (client, returned []byte) {
	var emit func([]byte) error
	if useEmit {
		emit = func(b []byte) error { client = append(client, b...); return nil }
	}
	g := NewOverflowGate(d, gateNewInner(d, xml, usage), r, emit)
	for _, c := range chunks {
		w := g.Write(c)
		client = append(client, w...)
		returned = append(returned, w...)
	}
	w := g.Close()
	client = append(client, w...)
	returned = append(returned, w...)
	if g.Close() != nil || g.Write([]byte("data: x\n\n")) != nil {
		panic("output after Close")
	}
	return client, returned
}

// gateKeepAlives is the run of keep-alive events (and a BOM) that opens b:
// what the gate forwards before it decides.
func gateKeepAlives(d wire.Dialect, b []byte) []byte {
	var dec Decoder
	n := 0
	if bytes.HasPrefix(b, bom) {
		n = len(bom)
	}
	for _, ev := range dec.Feed(b) {
		if !keepAlive(d, &ev) {
			break
		}
		n += len(ev.Raw)
	}
	if n == len(bom) && bytes.HasPrefix(b, bom) {
		n = 0
	}
	return append([]byte(nil), b[:n]...)
}

func gateChunkings(b []byte) map[string][][]byte {
	out := map[string][][]byte{"whole": {b}}
	for _, c := range antChunkings {
		out[c.name] = c.cut(b)
	}
	return out
}

func sse(name, data string) string {
	if name == "" {
		return "data: " + data + "\n\n"
	}
	return "event: " + name + "\ndata: " + data + "\n\n"
}

// ---- streams ------------------------------------------------------------

const (
	gRespCreated    = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1760000000,"status":"in_progress","error":null,"model":"gpt-5-mini","output":[],"usage":null}}`
	gRespInProgress = `{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","created_at":1760000000,"status":"in_progress","error":null,"model":"gpt-5-mini","output":[],"usage":null}}`
	gRespOverflow   = `{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}`
	gRespFailed     = `{"type":"response.failed","sequence_number":2,"response":{"id":"resp_1","object":"response","status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again."},"output":[]}}`
	gRespRate       = `{"type":"error","sequence_number":2,"error":{"type":"requests","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5-mini on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.","param":null}}`

	gAntStart    = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	gAntPing     = `{"type": "ping"}`
	gAntOverflow = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`
	gAntOverload = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`

	gOAIRole       = `{"id":"gen-1","object":"chat.completion.chunk","created":1760000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`
	gOAIRoleNull   = `{"id":"gen-1","object":"chat.completion.chunk","created":1760000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"finish_reason":null}]}`
	gOAIAzure      = `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}`
	gOROverflow    = `{"error":{"code":400,"message":"This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically."}}`
	gORMidOverflow = `{"id":"gen-1","object":"chat.completion.chunk","created":1760000000,"model":"m","error":{"code":400,"message":"This endpoint's maximum context length is 32768 tokens. However, you requested about 42832 tokens."},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`
	gLlamaOverflow = `{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`
	gORRate        = `{"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min. "}}`

	gGeminiOverflow = `{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`
	gBedrockInput   = `{"message":"Input is too long for requested model."}`
)

func gOAIText(s string) string {
	return `{"id":"gen-1","object":"chat.completion.chunk","created":1760000000,"model":"m","choices":[{"index":0,"delta":{"content":` + string(expQuote(s)) + `},"finish_reason":null}]}`
}

func gOAIStop() string {
	return `{"id":"gen-1","object":"chat.completion.chunk","created":1760000000,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
}

// gateReplay is a well-formed replay stream of dialect d.
func gateReplay(d wire.Dialect) string {
	switch d {
	case wire.OpenAIChat:
		return sse("", gOAIRole) + sse("", gOAIText("replayed ")) + sse("", gOAIText("answer")) + sse("", gOAIStop()) + "data: [DONE]\n\n"
	case wire.Anthropic:
		return expAntStart("msg_r") + expAntText(0, "replayed answer") + expAntEnd("end_turn")
	case wire.OpenAIResponses:
		ev, item := expRespMsg(0, "msg_r", "replayed answer")
		_ = item
		return expResp("resp_r", ev, item)
	}
	return sse("", `{"candidates":[{"content":{"parts":[{"text":"replayed"}],"role":"model"},"finishReason":"STOP"}]}`)
}

type gateCase struct {
	name    string
	d       wire.Dialect
	body    string
	overflw bool // the first meaningful event is an overflow error
	class   overflow.Class
}

func gateCases() []gateCase {
	return []gateCase{
		{"responses-error-after-created", wire.OpenAIResponses,
			sse("response.created", gRespCreated) + sse("response.in_progress", gRespInProgress) + sse("error", gRespOverflow), true, overflow.ContextOverflow},
		{"responses-error-first", wire.OpenAIResponses, sse("error", gRespOverflow), true, overflow.ContextOverflow},
		{"responses-failed", wire.OpenAIResponses,
			sse("response.created", gRespCreated) + sse("response.failed", gRespFailed), true, overflow.ContextOverflow},
		{"responses-data-only-error", wire.OpenAIResponses,
			sse("", gRespCreated) + sse("", gRespOverflow), true, overflow.ContextOverflow},
		{"responses-rate-limit", wire.OpenAIResponses,
			sse("response.created", gRespCreated) + sse("error", gRespRate), false, ""},
		{"anthropic-error-after-start-ping", wire.Anthropic,
			sse("message_start", gAntStart) + sse("ping", gAntPing) + sse("error", gAntOverflow), true, overflow.ContextOverflow},
		{"anthropic-error-first-crlf", wire.Anthropic,
			strings.ReplaceAll(sse("error", gAntOverflow), "\n", "\r\n"), true, overflow.ContextOverflow},
		{"anthropic-error-unterminated", wire.Anthropic,
			sse("message_start", gAntStart) + "event: error\ndata: " + gAntOverflow, true, overflow.ContextOverflow},
		{"anthropic-overloaded", wire.Anthropic,
			sse("message_start", gAntStart) + sse("error", gAntOverload), false, ""},
		{"openrouter-error-chunk", wire.OpenAIChat,
			": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n" + sse("", gOAIRole) + sse("", gOROverflow) + "data: [DONE]\n\n", true, overflow.ContextOverflow},
		{"openrouter-error-in-chunk", wire.OpenAIChat,
			"\xEF\xBB\xBF: OPENROUTER PROCESSING\n\n" + sse("", gOAIRoleNull) + sse("", gORMidOverflow), true, overflow.ContextOverflow},
		{"llamacpp-error", wire.OpenAIChat,
			sse("", gOAIAzure) + sse("", gLlamaOverflow), true, overflow.ContextOverflow},
		{"llamacpp-event-error", wire.OpenAIChat,
			"event: error\ndata: " + gLlamaOverflow + "\n\n", true, overflow.ContextOverflow},
		{"openrouter-rate-limit", wire.OpenAIChat,
			": OPENROUTER PROCESSING\n\n" + sse("", gORRate) + "data: [DONE]\n\n", false, ""},
		{"gemini-error", wire.Gemini, sse("", gGeminiOverflow), true, overflow.ContextOverflow},
		{"bedrock-style-exception", wire.Bedrock, ": hi\n\n" + sse("validationException", gBedrockInput), true, overflow.ContextOverflow},
		{"chat-content-first", wire.OpenAIChat,
			sse("", gOAIRole) + sse("", gOAIText("hello")) + sse("", gOROverflow), false, ""},
		{"chat-done-first", wire.OpenAIChat, sse("", gOAIRole) + "data: [DONE]\n\n" + sse("", gOROverflow), false, ""},
		{"anthropic-content-first", wire.Anthropic,
			expAntStart("m") + expAntText(0, "hi") + sse("error", gAntOverflow), false, ""},
		{"gemini-content-first", wire.Gemini, gateReplay(wire.Gemini) + sse("", gGeminiOverflow), false, ""},
		{"only-preamble", wire.OpenAIResponses, sse("response.created", gRespCreated), false, ""},
		{"empty", wire.OpenAIChat, "", false, ""},
	}
}

// ---- tests --------------------------------------------------------------

func TestOverflowGateClassifies(t *testing.T) {
	for _, c := range gateCases() {
		if !c.overflw {
			continue
		}
		v, _, err := LeadingError(c.d, strings.NewReader(c.body))
		if err != nil || v.Class != c.class {
			t.Errorf("%s: verdict %+v err %v, want %s", c.name, v, err, c.class)
		}
	}
}

func TestOverflowGate(t *testing.T) {
	for _, c := range gateCases() {
		for cname, chunks := range gateChunkings([]byte(c.body)) {
			for _, useEmit := range []bool{false, true} {
				t.Run(c.name+"/"+cname, func(t *testing.T) {
					replay := gateReplay(c.d)
					rec := &gateRec{body: replay}
					client, returned := gateRun(c.d, false, true, rec, chunks, useEmit)
					if c.overflw {
						if len(rec.verdicts) != 1 || rec.verdicts[0].Class != c.class {
							t.Fatalf("verdicts %+v", rec.verdicts)
						}
						if rec.closed != 1 {
							t.Fatalf("replay body closed %d times", rec.closed)
						}
						ka := gateKeepAlives(c.d, []byte(c.body))
						want := gateAlone(c.d, false, true, [][]byte{ka, []byte(replay)})
						if !bytes.Equal(client, want) {
							t.Fatalf("client got\n%q\nwant keep-alives and inner on the replay\n%q", client, want)
						}
						if useEmit {
							// The replay is emitted; only the keep-alives and
							// inner's Close output come back from a call.
							_, tail := gateAloneParts(c.d, []byte(replay))
							kaOut, _ := gateAloneParts(c.d, ka)
							if !bytes.HasSuffix(returned, tail) || !bytes.HasPrefix(kaOut, returned[:len(returned)-len(tail)]) {
								t.Fatalf("returned %q with emit, want %q", returned, tail)
							}
						}
						return
					}
					if len(rec.verdicts) != 0 {
						t.Fatalf("Recover called: %+v", rec.verdicts)
					}
					if want := gateAlone(c.d, false, true, chunks); !bytes.Equal(client, want) {
						t.Fatalf("client got\n%q\nwant inner alone\n%q", client, want)
					}
				})
			}
		}
	}
}

// Refused, panicking, or empty-bodied recovery: the client gets what inner
// alone makes of the original stream.
func TestOverflowGateNoRecovery(t *testing.T) {
	for _, c := range gateCases() {
		for cname, chunks := range gateChunkings([]byte(c.body)) {
			for _, rec := range []*gateRec{{refuse: true}, {panics: true}, {body: ""}} {
				client, _ := gateRun(c.d, false, false, rec, chunks, rec.body == "" && !rec.refuse)
				if want := gateAlone(c.d, false, false, chunks); !bytes.Equal(client, want) {
					t.Fatalf("%s/%s %+v: got\n%q\nwant\n%q", c.name, cname, rec, client, want)
				}
				if c.overflw != (len(rec.verdicts) == 1) || len(rec.verdicts) > 1 {
					t.Fatalf("%s: verdicts %+v", c.name, rec.verdicts)
				}
			}
		}
	}
}

// Nothing leaves the gate while only preamble arrived.
func TestOverflowGateHoldsPreamble(t *testing.T) {
	pre := sse("", gOAIRole) + ": OPENROUTER PROCESSING\n\n"
	g := NewOverflowGate(wire.OpenAIChat, gateNewInner(wire.OpenAIChat, false, false), &gateRec{refuse: true}, nil)
	for i := 0; i < len(pre); i++ {
		if out := g.Write([]byte{pre[i]}); len(out) != 0 {
			t.Fatalf("wrote %q while holding", out)
		}
	}
	if out := g.Write([]byte(sse("", gOAIText("x")))); !bytes.Contains(out, []byte(`"content":"x"`)) {
		t.Fatalf("content not released: %q", out)
	}
	// From here every Write goes straight through.
	if out := g.Write([]byte(sse("", gOAIText("y")))); !bytes.Contains(out, []byte(`"content":"y"`)) {
		t.Fatalf("pass-through: %q", out)
	}
}

// Past 64 KiB of preamble the gate gives up.
func TestOverflowGateHoldLimit(t *testing.T) {
	pad := strings.Repeat(sse("", gOAIRole), gateMaxHold/len(sse("", gOAIRole))+2)
	body := pad + sse("", gOROverflow)
	rec := &gateRec{body: gateReplay(wire.OpenAIChat)}
	g := NewOverflowGate(wire.OpenAIChat, nil, rec, nil)
	var out []byte
	released := false
	for _, c := range antFixed(997)([]byte(body)) {
		w := g.Write(c)
		if len(w) > 0 && !released {
			released = true
			if len(out)+len(w) > gateMaxHold+997 {
				t.Fatalf("held %d bytes", len(w))
			}
		}
		out = append(out, w...)
	}
	out = append(out, g.Close()...)
	if len(rec.verdicts) != 0 || string(out) != body {
		t.Fatalf("verdicts %v; output differs", rec.verdicts)
	}
	if r := GaveUp(g); r != GaveUpHold {
		t.Fatalf("GaveUp = %q", r)
	}
	v, prefix, err := LeadingError(wire.OpenAIChat, strings.NewReader(body))
	if v.Match() || err != nil || len(prefix) != gateMaxHold {
		t.Fatalf("LeadingError %+v %d %v", v, len(prefix), err)
	}
}

// A binary AWS event stream is passed on at once.
func TestOverflowGateBinary(t *testing.T) {
	frame := []byte{0, 0, 0, 90, 0, 0, 0, 60, 1, 2, 3, 4, '\n', '\n', 'x'}
	g := NewOverflowGate(wire.Bedrock, nil, &gateRec{}, nil)
	if out := g.Write(frame); !bytes.Equal(out, frame) {
		t.Fatalf("got %q", out)
	}
	if v, prefix, err := LeadingError(wire.Bedrock, bytes.NewReader(frame)); v.Match() || err != nil || !bytes.Equal(prefix, frame) {
		t.Fatalf("LeadingError %+v %q %v", v, prefix, err)
	}
}

func TestOverflowGateNilRecoverer(t *testing.T) {
	inner := gateNewInner(wire.Anthropic, false, false)
	if g := NewOverflowGate(wire.Anthropic, inner, nil, nil); g != inner {
		t.Fatal("nil Recoverer should return inner")
	}
	g := NewOverflowGate(wire.OpenAIChat, nil, nil, nil)
	if out := g.Write([]byte("abc")); string(out) != "abc" || g.Close() != nil {
		t.Fatal("nil inner should pass bytes")
	}
}

// A replay whose Read panics midway ends the client stream through inner,
// without a panic.
type gatePanicBody struct {
	b []byte
	n int
}

func (p *gatePanicBody) Read(b []byte) (int, error) {
	if p.n >= len(p.b)/2 {
		panic("read panics")
	}
	c := copy(b[:1], p.b[p.n:])
	p.n += c
	return c, nil
}
func (p *gatePanicBody) Close() error { panic("close panics") }

type gatePanicRec struct{ body string }

func (r gatePanicRec) Recover(overflow.Verdict) (io.ReadCloser, error) {
	return &gatePanicBody{b: []byte(r.body)}, nil
}

func TestOverflowGatePanickingReplay(t *testing.T) {
	replay := gateReplay(wire.Anthropic)
	g := NewOverflowGate(wire.Anthropic, gateNewInner(wire.Anthropic, false, false), gatePanicRec{replay}, nil)
	out := append(g.Write([]byte(sse("error", gAntOverflow))), g.Close()...)
	want := gateAlone(wire.Anthropic, false, false, [][]byte{[]byte(replay[:len(replay)/2])})
	if !bytes.Equal(out, want) {
		t.Fatalf("got\n%q\nwant\n%q", out, want)
	}
}

// Every scenario of testenv/testdata/streams: output byte-identical to
// inner alone, with a Recoverer that would recover (none of them opens with
// an overflow error) and with one that refuses.
func TestOverflowGateScenarios(t *testing.T) {
	for _, file := range []string{"openai_chat.json", "anthropic.json", "openai_responses.json"} {
		for _, sc := range antLoadScenarios(t, file) {
			d := wire.Dialect(sc.Dialect)
			if d == "" {
				d = wire.OpenAIChat
			}
			body := []byte(sc.Upstream.Body)
			v, prefix, err := LeadingError(d, bytes.NewReader(body))
			if err != nil || v.Match() || !bytes.HasPrefix(body, prefix) {
				t.Fatalf("%s: LeadingError %+v %v", sc.Name, v, err)
			}
			for cname, chunks := range gateChunkings(body) {
				for _, rec := range []*gateRec{{body: gateReplay(d)}, {refuse: true}} {
					client, _ := gateRun(d, sc.XML, sc.IncludeUsage, rec, chunks, false)
					if want := gateAlone(d, sc.XML, sc.IncludeUsage, chunks); !bytes.Equal(client, want) {
						t.Fatalf("%s/%s: got\n%q\nwant\n%q", sc.Name, cname, client, want)
					}
					if len(rec.verdicts) != 0 {
						t.Fatalf("%s: Recover called %+v", sc.Name, rec.verdicts)
					}
				}
			}
		}
	}
}

// gateReader returns the body in 1-byte reads, then an error.
type gateReader struct {
	b   []byte
	err error
}

func (r *gateReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, r.err
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

func TestLeadingError(t *testing.T) {
	for _, c := range gateCases() {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c.body)
			if oneByte {
				r = &gateReader{b: []byte(c.body), err: io.EOF}
			}
			v, prefix, err := LeadingError(c.d, r)
			if err != nil || v.Match() != c.overflw {
				t.Fatalf("%s: %+v %v", c.name, v, err)
			}
			rest, _ := io.ReadAll(r)
			if got := string(prefix) + string(rest); got != c.body {
				t.Fatalf("%s: prefix+rest %q", c.name, got)
			}
			if oneByte && c.name == "openrouter-error-chunk" && string(rest) != "data: [DONE]\n\n" {
				t.Fatalf("%s: read past the deciding event: rest %q", c.name, rest)
			}
		}
	}
	// A read error before a verdict is reported; after one it is not.
	boom := errors.New("boom")
	if _, p, err := LeadingError(wire.Anthropic, &gateReader{b: []byte(sse("ping", gAntPing)), err: boom}); err != boom || len(p) == 0 {
		t.Fatalf("err %v", err)
	}
	if v, _, err := LeadingError(wire.Anthropic, &gateReader{b: []byte(sse("error", gAntOverflow)), err: boom}); err != nil || !v.Match() {
		t.Fatalf("%+v %v", v, err)
	}
	if v, p, err := LeadingError(wire.Anthropic, nil); v.Match() || p != nil || err != nil {
		t.Fatal("nil body")
	}
}

// Keep-alives reach the client at once (review finding 18): two minutes of
// OpenRouter's queueing comments used to be held until the first real
// event, so idle timeouts of about a minute cut the stream.
func TestOverflowGateForwardsKeepAlives(t *testing.T) {
	for _, d := range []wire.Dialect{wire.OpenAIChat, wire.Anthropic, wire.OpenAIResponses} {
		rec := &gateRec{body: gateReplay(d)}
		g := NewOverflowGate(d, gateNewInner(d, false, true), rec, nil)
		ka := ": OPENROUTER PROCESSING\n\n"
		var client []byte
		for i := 0; i < 120; i++ {
			out := g.Write([]byte(ka))
			if string(out) != ka {
				t.Fatalf("%v: keep-alive %d gave the client %q", d, i, out)
			}
			client = append(client, out...)
		}
		if d == wire.Anthropic {
			ping := "event: ping\ndata: {\"type\": \"ping\"}\n\n"
			// Split across Writes: the ping leaves when it is complete.
			if out := g.Write([]byte(ping[:7])); len(out) != 0 {
				t.Fatalf("half a ping: %q", out)
			}
			out := g.Write([]byte(ping[7:]))
			if string(out) != ping {
				t.Fatalf("ping gave the client %q", out)
			}
			client = append(client, out...)
		}
		// The stream still opens with an overflow error: recovery still works.
		var errEv string
		switch d {
		case wire.OpenAIChat:
			errEv = sse("", gOROverflow)
		case wire.Anthropic:
			errEv = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 300000 tokens > 200000 maximum\"}}\n\n"
		case wire.OpenAIResponses:
			errEv = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}}}\n\n"
		}
		client = append(client, g.Write([]byte(errEv))...)
		client = append(client, g.Close()...)
		if len(rec.verdicts) != 1 {
			t.Fatalf("%v: asked %d times; client got %q", d, len(rec.verdicts), client)
		}
		want := gateAlone(d, false, true, [][]byte{[]byte(strings.Repeat(ka, 120)), []byte(gateReplay(d))})
		if d == wire.Anthropic {
			want = gateAlone(d, false, true, [][]byte{[]byte(strings.Repeat(ka, 120) + "event: ping\ndata: {\"type\": \"ping\"}\n\n"), []byte(gateReplay(d))})
		}
		if !bytes.Equal(client, want) {
			t.Fatalf("%v: client got\n%q\nwant\n%q", d, client, want)
		}
	}
}
