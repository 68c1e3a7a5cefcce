package history

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/wire"
)

// TestSizesHonourCompaction: the Messages API drops every block before a
// compaction block, so the size estimate starts there.
func TestSizesHonourCompaction(t *testing.T) {
	old := strings.Repeat("old history line\n", 2000)
	head := `{"model":"claude-sonnet-4-5","max_tokens":1000,"messages":[` +
		`{"role":"user","content":` + string(wire.QuoteString(old)) + `},` +
		`{"role":"assistant","content":[{"type":"text","text":"done"}]},` +
		`{"role":"user","content":"continue"},`
	comp := `{"type":"compaction","content":"Summary: the user asked for the build to be fixed."}`
	body := []byte(head + `{"role":"assistant","content":[` + comp + `,{"type":"text","text":"ok"}]},` +
		`{"role":"user","content":"next step"}]}`)
	c, err := wire.Parse(wire.Anthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	pts := sizes(c)
	last := pts[len(pts)-1]
	at := bytes.Index(body, []byte(comp))
	// The list from the block on (the request has no tools or system
	// prompt, and parameters are no prompt).
	want := len(body) - at - len(`]}`)
	if last.size != want {
		t.Errorf("size after the compaction block %d, want %d (body %d)", last.size, want, len(body))
	}
	// A point before the compaction block still counts the whole prefix.
	if pts[0].size < len(old) {
		t.Errorf("first point %d lost the old history", pts[0].size)
	}
	// Without the block the old history counts.
	plain := bytes.Replace(body, []byte(comp+","), nil, 1)
	c2, _ := wire.Parse(wire.Anthropic, plain)
	if p := sizes(c2); p[len(p)-1].size < len(old) {
		t.Errorf("no compaction block: size %d", p[len(p)-1].size)
	}
}
