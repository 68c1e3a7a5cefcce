package extproc

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// givingUp is a transform that passes bytes and reports it stopped holding.
type givingUp struct{ writes int }

func (g *givingUp) Write(b []byte) []byte { g.writes++; return b }
func (g *givingUp) Close() []byte         { return nil }
func (g *givingUp) GaveUp() string {
	if g.writes >= 2 {
		return "hold_limit"
	}
	return ""
}

// A stream repair that hits its hold cap passes the rest through; the
// exchange counts that once, under the repair's reason.
func TestTransformGiveUpIsCounted(t *testing.T) {
	s := testServer(t, "")
	x := newTestExchange(s)
	x.handle(reqHeaders("/v1/chat/completions", modeBuffered, modeDuplex))
	x.resp.transform = &givingUp{}
	for i := range 4 {
		x.handle(respBody([]byte("data: {}\n\n"), i == 3))
	}
	if n := testutil.ToFloat64(s.metrics.Passthrough.WithLabelValues("hold_limit")); n != 1 {
		t.Fatalf("passthrough_total{reason=hold_limit} = %v, want 1", n)
	}
}
