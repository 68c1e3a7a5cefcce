package stream

import (
	"strings"

	"github.com/toolproc/toolproc/filters/wire"
)

// hostileSeeds are fuzz seeds of the shapes a misbehaving upstream can
// send: one huge event, JSON nested far deeper than any parser's stack,
// thousands of tiny events, a tool call with huge arguments. They are kept
// to tens of KiB so each execution stays fast; the benchmarks cover
// the 16 MiB scale.
func hostileSeeds(d wire.Dialect) [][]byte {
	big := strings.Repeat("x", 16<<10)
	deepArr := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	deepObj := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	var text, call string
	switch d {
	case wire.Anthropic:
		text = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + big + "\"}}\n\n"
		call = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"expand_context\",\"input\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"id\\\":\\\"" + big + "\\\"}\"}}\n\n"
	case wire.OpenAIResponses:
		text = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"" + big + "\"}\n\n"
		call = "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":1,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"expand_context\",\"arguments\":\"\"}}\n\n" +
			"event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":1,\"delta\":\"" + big + "\"}\n\n"
	default:
		text = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + big + "\"}}]}\n\n"
		call = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"expand_context\",\"arguments\":\"" + big + "\"}}]}}]}\n\n"
	}
	return [][]byte{
		[]byte(text),
		[]byte(call),
		[]byte("data: " + big), // never terminated
		[]byte("data: " + deepArr + "\n\n"),
		[]byte("data: " + deepObj + "\n\ndata: {\"choices\":[{\"delta\":{\"content\":" + deepArr + "}}]}\n\n"),
		[]byte(strings.Repeat("data: {}\n\n", 1000)),
		[]byte(strings.Repeat(": k\n\n", 1000) + strings.Repeat("\n", 1000)),
		[]byte(strings.Repeat("event: x\r\n", 1000) + "data: {}\r\r"),
	}
}

// hostileXML are XML scanner seeds: unclosed heads, many parameters,
// a flood of '<'.
func hostileXML() []string {
	var params strings.Builder
	params.WriteString(`<invoke name="f">`)
	for i := 0; params.Len() < 128<<10; i++ {
		params.WriteString(`<parameter name="p` + itoa(i) + `">v</parameter>`)
	}
	params.WriteString(`</invoke>`)
	return []string{
		strings.Repeat(`<invoke name="a">`, 10000),
		params.String(),
		strings.Repeat("<", 100000),
		strings.Repeat(`<invoke name="`, 5000),
		`<invoke name="f"><parameter name="p">` + strings.Repeat("[", 50000) + `</parameter></invoke>`,
	}
}
