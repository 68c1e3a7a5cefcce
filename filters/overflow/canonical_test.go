package overflow

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// TestCanonicalErrorRoundTrip: every canonical answer is valid JSON that
// the classifier reads back as an overflow with the counts it was given,
// and that IsCanonical recognises (so it is never rewritten twice).
func TestCanonicalErrorRoundTrip(t *testing.T) {
	for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat, wire.OpenAIResponses, wire.Gemini, wire.Bedrock} {
		c, ok := CanonicalError(d, 300_000, 200_000)
		if !ok || c.Status != 400 || !gjson.ValidBytes(c.Body) {
			t.Fatalf("%s: %v %d %s", d, ok, c.Status, c.Body)
		}
		h := map[string]string{}
		if c.HeaderName != "" {
			h[c.HeaderName] = c.HeaderValue
		}
		v := Classify(c.Status, h, c.Body)
		if v.Class != ContextOverflow {
			t.Errorf("%s: classified %+v", d, v)
		}
		if d == wire.Anthropic || d == wire.OpenAIChat || d == wire.Gemini {
			if v.Tokens.Input != 300_000 || v.Tokens.Limit != 200_000 {
				t.Errorf("%s: counts %+v", d, v.Tokens)
			}
		}
		if !IsCanonical(d, c.Status, h, c.Body) {
			t.Errorf("%s: own form not recognised", d)
		}
		ev, ok := CanonicalStreamError(d, 300_000, 200_000)
		if d == wire.Bedrock {
			if ok {
				t.Errorf("bedrock has no SSE form")
			}
			continue
		}
		name, data := firstEvent(ev)
		if !gjson.Valid(data) {
			t.Errorf("%s: stream event data invalid: %s", d, ev)
		}
		sv := ClassifyStreamEvent(name, []byte(data))
		if sv.Class != ContextOverflow {
			t.Errorf("%s: stream form classified %+v", d, sv)
		}
		if (d == wire.Anthropic || d == wire.OpenAIChat || d == wire.OpenAIResponses) && !IsCanonicalStream(d, sv) {
			t.Errorf("%s: stream form not recognised: %+v", d, sv)
		}
	}
}

func firstEvent(b []byte) (name, data string) {
	for _, line := range strings.Split(string(bytes.SplitN(b, []byte("\n\n"), 2)[0]), "\n") {
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
	}
	return name, data
}

// TestCanonicalCounts: a prompt never "fits" in a canonical overflow.
func TestCanonicalCounts(t *testing.T) {
	c, _ := CanonicalError(wire.Anthropic, 0, 20_000)
	if !bytes.Contains(c.Body, []byte("prompt is too long: 20001 tokens > 20000 maximum")) {
		t.Errorf("%s", c.Body)
	}
}

// TestIsCanonicalRejectsOthers: the forms that reach clients behind
// proxies and routers are not canonical for any dialect.
func TestIsCanonicalRejectsOthers(t *testing.T) {
	others := []struct {
		status int
		body   string
	}{
		{413, `<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>`},
		{400, `{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"ERROR","provider_name":"Chutes"}},"user_id":"user_2x"}`},
		{400, `{"message":"Input is too long for requested model."}`},
	}
	for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat, wire.OpenAIResponses, wire.Gemini} {
		for _, o := range others {
			if IsCanonical(d, o.status, nil, []byte(o.body)) {
				t.Errorf("%s: %.40s taken for canonical", d, o.body)
			}
		}
	}
}
