package extproc

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/toolproc/toolproc/filters/overflow"
)

// TestPlainErrorBody: a gzip-encoded error is classified decoded; a body
// that does not decode, or decodes past max_error_bytes, is read as it came.
func TestPlainErrorBody(t *testing.T) {
	x := newTestExchange(testServer(t, ""))
	x.profile = x.srv.currentProfiles()["default"]
	body := []byte(`{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"ERROR"}}}`)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(body)
	zw.Close()
	gz := map[string]string{"content-encoding": "gzip"}
	if got := x.plainErrorBody(gz, zb.Bytes()); !bytes.Equal(got, body) {
		t.Errorf("not decoded: %q", got)
	}
	if v := overflow.Classify(400, gz, x.plainErrorBody(gz, zb.Bytes())); v.Class != overflow.ProviderLimit {
		t.Errorf("decoded body classified %+v", v)
	}
	if got := x.plainErrorBody(gz, body); !bytes.Equal(got, body) {
		t.Error("a body that is not gzip changed")
	}
	if got := x.plainErrorBody(map[string]string{"content-encoding": "br"}, zb.Bytes()); !bytes.Equal(got, zb.Bytes()) {
		t.Error("another encoding was decoded")
	}
	var big bytes.Buffer
	zw = gzip.NewWriter(&big)
	zw.Write(bytes.Repeat([]byte("a"), x.profile.Recovery.MaxErrorBytes+1))
	zw.Close()
	if got := x.plainErrorBody(gz, big.Bytes()); !bytes.Equal(got, big.Bytes()) {
		t.Error("a body past max_error_bytes was decoded")
	}
}
