package testenv

import (
	"errors"
	"strconv"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// errContentLengthMismatch is the local reply a BUFFERED body mutation gets when content-length does not
// match the new body. It is an internal error, so failure_mode_allow does not help (§4 rule 2, §9).
var errContentLengthMismatch = errors.New("mismatch_between_content_length_and_the_length_of_the_mutated_body")

// removesContentLength reports whether Envoy drops content-length for a direction with this mode
// (§4 rule 1): the body may change size and nothing will fix the header in time. That is STREAMED,
// FULL_DUPLEX_STREAMED, BUFFERED_PARTIAL, and BUFFERED when the headers were not sent to the processor.
// allow_content_length_header (1.38+) turns the removal off.
func removesContentLength(body extprocfilterv3.ProcessingMode_BodySendMode, sendHeaders, allowHeader bool) bool {
	if allowHeader {
		return false
	}
	switch body {
	case extprocfilterv3.ProcessingMode_STREAMED,
		extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
		extprocfilterv3.ProcessingMode_BUFFERED_PARTIAL:
		return true
	case extprocfilterv3.ProcessingMode_BUFFERED:
		return !sendHeaders
	}
	return false
}

// checkMutatedContentLength is Envoy's check on a BufferedBodyCallback body mutation (§4 rule 2): when
// the held headers still carry a parsable content-length, after the same response's header_mutation, it
// must equal the length of body_mutation.body. Envoy compares against body() whatever the oneof holds,
// so clear_body (and even clear_body:false) count as length 0.
func checkMutatedContentLength(held *headerMap, bm *extprocv3.BodyMutation) error {
	if held == nil || bm == nil {
		return nil
	}
	v, ok := held.get("content-length")
	if !ok {
		return nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil
	}
	if n != uint64(len(bm.GetBody())) {
		return errContentLengthMismatch
	}
	return nil
}

// applyBodyMutation applies a BodyMutation to data (§4): body replaces, including body:"" with the
// oneof set; clear_body:true empties; clear_body:false and no mutation keep the bytes.
func applyBodyMutation(data []byte, bm *extprocv3.BodyMutation) []byte {
	switch m := bm.GetMutation().(type) {
	case *extprocv3.BodyMutation_Body:
		return append([]byte(nil), m.Body...)
	case *extprocv3.BodyMutation_ClearBody:
		if m.ClearBody {
			return []byte{}
		}
	}
	return data
}
