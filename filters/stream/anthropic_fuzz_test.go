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
