package extproc

import "testing"

// TestWasSent: recovery skips a rung whose body went upstream already, the
// rewrite's (kept as it is, compared byte for byte) or a replay's (kept as
// a digest); a body that differs by one byte was not sent.
func TestWasSent(t *testing.T) {
	var r rewriteState
	first := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	replay := []byte(`{"model":"m","messages":[{"role":"user","content":"h"}]}`)
	if r.wasSent(first) {
		t.Fatal("nothing was sent yet")
	}
	r.markSent(first)
	if !r.wasSent(append([]byte(nil), first...)) {
		t.Error("the rewrite's body, sent first, is not recognised")
	}
	if r.wasSent(replay) {
		t.Error("a body never sent is recognised")
	}
	r.markSent(replay)
	if !r.wasSent(append([]byte(nil), replay...)) {
		t.Error("a replay's body is not recognised")
	}
	other := append([]byte(nil), replay...)
	other[len(other)-3] = 'x'
	if r.wasSent(other) {
		t.Error("a body one byte apart is recognised")
	}
}
