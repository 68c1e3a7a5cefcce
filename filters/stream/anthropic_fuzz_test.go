package stream

import (
	"bytes"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

// FuzzAnthropicNormalizer: whatever the bytes and however they are cut, the
// normalizer does not panic, its output is a terminated SSE stream whose data
// are JSON objects and that keeps every rule antCheckStrict knows, and the
// output does not depend on the chunking.
func FuzzAnthropicNormalizer(f *testing.F) {
	for _, sc := range antLoadScenarios(f, "anthropic.json") {
		f.Add([]byte(sc.Upstream.Body), uint64(len(sc.Name)))
	}
	f.Add([]byte("event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":-1}\r\r"), uint64(1))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":1e400,\"content_block\":{\"type\":\"tool_use\",\"id\":5}}\n\n"), uint64(2))
	f.Add([]byte("\xEF\xBB\xBFevent: error\n\n: c\n\ndata: [DONE]\n"), uint64(3))
	for i, b := range hostileSeeds(wire.Anthropic) {
		f.Add(b, uint64(i))
	}
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		whole, _ := antRun(NewAnthropic(antFixedIDs), [][]byte{body})
		if _, err := antCheckStrict(whole); err != nil {
			t.Fatalf("%v\ninput %q\noutput %q", err, body, whole)
		}
		cut, _ := antRun(NewAnthropic(antFixedIDs), antRandom(seed)(body))
		if !bytes.Equal(cut, whole) {
			t.Fatalf("chunked output differs:\n%q\n%q", cut, whole)
		}
	})
}

// FuzzAnthropicNormalizerXML: the same properties with <invoke> blocks in
// the text turned into tool_use blocks.
func FuzzAnthropicNormalizerXML(f *testing.F) {
	xmlIDs := antFixedIDs
	xmlIDs.XMLToolCalls = true
	for _, sc := range antLoadScenarios(f, "anthropic.json") {
		f.Add([]byte(sc.Upstream.Body), uint64(len(sc.Name)))
	}
	f.Add([]byte(antXMLStream("Let me look.\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke> and <invoke name=\"final_answer\"><parameter name=\"answer\">ok</parameter></invoke>", 5)), uint64(4))
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		whole, _ := antRun(NewAnthropic(xmlIDs), [][]byte{body})
		if _, err := antCheckStrict(whole); err != nil {
			t.Fatalf("%v\ninput %q\noutput %q", err, body, whole)
		}
		cut, _ := antRun(NewAnthropic(xmlIDs), antRandom(seed)(body))
		if !bytes.Equal(cut, whole) {
			t.Fatalf("chunked output differs:\n%q\n%q", cut, whole)
		}
	})
}

// antXMLStream is an Anthropic stream of one text block carrying text in
// pieces of n bytes.
func antXMLStream(text string, n int) string {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := 0; i < len(text); i += n {
		piece := text[i:min(i+n, len(text))]
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":" + string(wire.QuoteString(piece)) + "}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.String()
}
