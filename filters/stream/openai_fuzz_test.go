package stream

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

// oaiFuzzSeeds adds every scenario body and a few hand-made streams.
func oaiFuzzSeeds(f *testing.F, add func(body []byte)) {
	if b, err := os.ReadFile(oaiScenarioFile); err == nil {
		var list []oaiScenario
		if json.Unmarshal(b, &list) == nil {
			for _, s := range list {
				add([]byte(s.Upstream.Body))
			}
		}
	}
	add([]byte(oaiRole + oaiText(`a <invoke name="f"><parameter name="x">1</parameter></invoke> b <inv`) + oaiChunk(`{}`, "stop")))
	add([]byte(oaiRole + `data: {"error":null}` + "\n\n" + `data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{"}}]}}]}` + "\n\n"))
	add([]byte("data: not json\n\n"))
	add([]byte(`data:{"id":"0","object":"chat.completion.chunk","choices":[{"index":0,"delta":{}}]}`)) // no created/model
	add([]byte(`data:{"choices":[{"delta":0}]}`))
	add([]byte(oaiChunk(`{"tool_calls":[{"function":{"name":"0","arguments":"\"\""}}]}`, "") + oaiChunk(`{"tool_calls":[{"function":{"arguments":"\b"}}]}`, "")))
	add([]byte("data:{\"id\":\"\xea\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"\",\"choices\":[{\"index\":0,\"delta\":{}}]}"))
	add([]byte(": c\r\n\r\nevent: error\r\ndata: x\r\n\r\n"))
}

// FuzzOpenAIChatNormalizer: any bytes, any chunking, XML on or off: no
// panic; a chat stream always comes out satisfying the whole §3.6 profile
// (every data line one-line JSON or [DONE], [DONE] last exactly once, ...)
// and decodable by the openai-go port; a non-chat stream comes out as it
// went in.
func FuzzOpenAIChatNormalizer(f *testing.F) {
	oaiFuzzSeeds(f, func(b []byte) {
		f.Add(b, uint8(7), false)
		f.Add(b, uint8(1), true)
	})
	for _, b := range hostileSeeds(wire.OpenAIChat) {
		f.Add(b, uint8(0), true) // one byte per Write
		f.Add(b, uint8(30), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8, xml bool) {
		n := NewOpenAIChat(oaiOpts(xml, step%2 == 0)).(*oaiChat)
		size := int(step%31) + 1
		var out []byte
		for i := 0; i < len(in); i += size {
			out = append(out, n.Write(in[i:min(i+size, len(in))])...)
		}
		out = append(out, n.Close()...)
		if n.Write([]byte("data: [DONE]\n\n")) != nil || n.Close() != nil {
			t.Fatal("output after Close")
		}
		if n.mode == oaiPassthrough {
			// From the first data event on, bytes are forwarded unchanged.
			var d Decoder
			evs := d.Feed(in)
			if tail := d.Flush(); tail != nil {
				evs = append(evs, *tail)
			}
			var want []byte
			for _, ev := range evs {
				if want != nil || (ev.HasData && len(bytes.TrimSpace(ev.Data)) > 0) {
					want = append(want, ev.Raw...)
				}
			}
			if !bytes.HasSuffix(out, want) {
				t.Fatalf("passthrough changed bytes:\n%q\nwant suffix\n%q", out, want)
			}
			return
		}
		if err := oaiCheckProfile(out); err != nil {
			t.Fatalf("%v\ninput  %q\noutput %q", err, in, out)
		}
		if _, err := oaiAccumulate(out); err != nil {
			t.Fatalf("%v\noutput %q", err, out)
		}
	})
}

// FuzzXMLScanner: any text, any chunking: no panic; the pieces' raw text
// rebuilds the input (nothing lost, nothing invented); text pieces are the
// text itself; calls are well-formed blocks with JSON-object arguments; and
// the chunking does not change the result.
func FuzzXMLScanner(f *testing.F) {
	f.Add(`I'll read it.<invoke name="read_file"><parameter name="path">a.go</parameter></invoke> done`, uint64(1))
	f.Add(`<invoke name="final_answer"><parameter name="answer">ok</parameter></invoke><inv`, uint64(2))
	f.Add("<invoke name=\"a\"><invoke name=\"b\"></invoke></invoke><parameter name=\"x\">1</parameter>", uint64(3))
	f.Add(`<invoke name="f"><parameter name="o">{"a": [1, {"b": null}]}</parameter><parameter name="o">-0.5</parameter></invoke>`, uint64(4))
	for i, s := range hostileXML() {
		f.Add(s, uint64(i))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed>>7))
		var parts []string
		for rest := text; rest != ""; {
			n := min(len(rest), 1+r.IntN(12))
			parts = append(parts, rest[:n])
			rest = rest[n:]
		}
		pieces := xmlScanAll(parts...)
		var raw strings.Builder
		for _, p := range pieces {
			raw.WriteString(p.Raw)
			switch p.Kind {
			case xmlText:
				if p.Text != p.Raw || p.Text == "" {
					t.Fatalf("text piece %q raw %q", p.Text, p.Raw)
				}
			case xmlCall, xmlFinal:
				name := p.Name
				if p.Kind == xmlFinal {
					name = xmlFinalAnswer
				} else if name == xmlFinalAnswer {
					t.Fatal("final_answer returned as a call")
				}
				head := xmlOpen + name + `">`
				if !strings.HasPrefix(p.Raw, head) || !strings.HasSuffix(p.Raw, xmlClose) ||
					strings.Index(p.Raw, xmlClose) != len(p.Raw)-len(xmlClose) {
					t.Fatalf("block raw %q", p.Raw)
				}
				if p.Kind == xmlCall {
					var args map[string]any
					if err := json.Unmarshal([]byte(p.Args), &args); err != nil {
						t.Fatalf("arguments %q: %v", p.Args, err)
					}
				}
			}
		}
		if raw.String() != text {
			t.Fatalf("pieces rebuild %q, want %q", raw.String(), text)
		}
		if got, want := xmlShow(pieces), xmlShow(xmlScanAll(text)); got != want {
			t.Fatalf("chunking changed the result:\n%s\n%s", got, want)
		}
	})
}
