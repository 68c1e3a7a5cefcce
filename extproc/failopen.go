package extproc

import (
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// failOpen answers m after a panic so that every byte not yet answered
// reaches its destination unchanged, in every mode, and stops all rewriting
// of this exchange (review finding 8: the old net re-ran the transform that
// had panicked, inside the deferred function, and dropped the chunks a
// FULL_DUPLEX or STREAMED rewrite was holding).
//
// What "not yet answered" means per mode (docs/envoy-notes.md §3):
//   - BUFFERED and STREAMED: Envoy waits for exactly one answer per body
//     message, in order, and forwards its own copy of the chunk for an
//     answer without a mutation. Every message counted but not answered
//     (deferred STREAMED chunks, the message that panicked) gets such an
//     answer.
//   - FULL_DUPLEX_STREAMED: Envoy forwards only what streamed_response
//     carries. The bytes held for a whole-body rewrite, or a held error
//     answer, are sent as they came. Bytes a stream transform had consumed
//     but not released cannot be recovered from it (its state is what
//     failed): the chunk in hand and everything after pass through raw.
func (x *exchange) failOpen(m *extprocv3.ProcessingRequest) (resps []*extprocv3.ProcessingResponse) {
	defer func() {
		if v := recover(); v != nil {
			// The last resort must not call anything that holds state.
			x.log.Error("panic while failing open; answering the message bare", "panic", v)
			resps = bareAnswer(m, x.req.duplex(), x.resp.duplex())
		}
	}()
	x.process = false
	x.expansion.expandable = false
	held := x.recovery.held
	x.recovery.held = nil
	reqHeld := x.req.abandon()
	respHeld := x.resp.abandon()

	switch r := m.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return []*extprocv3.ProcessingResponse{headersResponse(dirRequest, &extprocv3.CommonResponse{})}
	case *extprocv3.ProcessingRequest_RequestBody:
		return x.req.failOpenBody(reqHeld, r.RequestBody)
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return append(x.req.failOpenBody(reqHeld, nil), trailersResponse(dirRequest))
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return []*extprocv3.ProcessingResponse{headersResponse(dirResponse, &extprocv3.CommonResponse{})}
	case *extprocv3.ProcessingRequest_ResponseBody:
		if held != nil {
			return x.releaseHeldError(held, r.ResponseBody.GetEndOfStream())
		}
		return x.resp.failOpenBody(respHeld, r.ResponseBody)
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		var out []*extprocv3.ProcessingResponse
		if held != nil {
			out = x.releaseHeldError(held, false)
		} else {
			out = x.resp.failOpenBody(respHeld, nil)
		}
		return append(out, trailersResponse(dirResponse))
	}
	return nil
}

// releaseHeldError answers a FULL_DUPLEX error answer held for recovery
// exactly as the upstream sent it.
func (x *exchange) releaseHeldError(h *heldError, eos bool) []*extprocv3.ProcessingResponse {
	x.resp.eos = x.resp.eos || eos
	resps := []*extprocv3.ProcessingResponse{headersResponse(dirResponse, &extprocv3.CommonResponse{})}
	return append(resps, streamedResponses(dirResponse, h.body, eos)...)
}

// countAnswers keeps, per direction, how many body messages have had their
// answer, so a fail-open knows which ones still need one.
func (x *exchange) countAnswers(resps []*extprocv3.ProcessingResponse) {
	for _, r := range resps {
		switch {
		case r.GetRequestBody() != nil:
			x.req.answered++
		case r.GetResponseBody() != nil:
			x.resp.answered++
		}
	}
}

// abandon stops every rewrite of this direction for the rest of the
// exchange and returns the bytes a FULL_DUPLEX whole-body rewrite held.
func (b *bodyStream) abandon() []byte {
	held := b.buf
	b.rewrite, b.transform, b.headers = nil, nil, nil
	b.passed = true
	b.buf = nil
	return held
}

// failOpenBody answers, unchanged, what this direction owes Envoy after a
// panic while handling msg (nil for trailers).
func (b *bodyStream) failOpenBody(held []byte, msg *extprocv3.HttpBody) []*extprocv3.ProcessingResponse {
	eos := msg.GetEndOfStream()
	if b.duplex() {
		if held == nil && msg != nil {
			// A transform (or nothing) was running: the chunk in hand was
			// not forwarded.
			held = msg.GetBody()
		}
		if len(held) == 0 && !eos && msg == nil {
			return nil
		}
		b.eos = b.eos || eos
		return streamedResponses(b.dir, held, eos)
	}
	owed := b.messages - b.answered
	if msg != nil && owed < 1 {
		owed = 1
	}
	b.pending = 0
	resps := make([]*extprocv3.ProcessingResponse, 0, owed)
	for range owed {
		resps = append(resps, b.bodyResponse(nil))
	}
	return resps
}

// duplex reports whether Envoy said this direction is FULL_DUPLEX_STREAMED.
func (b *bodyStream) duplex() bool {
	return b.known && b.mode == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
}

// bareAnswer is the answer of last resort: m passed through, touching no
// exchange state.
func bareAnswer(m *extprocv3.ProcessingRequest, reqDuplex, respDuplex bool) []*extprocv3.ProcessingResponse {
	switch r := m.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return []*extprocv3.ProcessingResponse{headersResponse(dirRequest, &extprocv3.CommonResponse{})}
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return []*extprocv3.ProcessingResponse{headersResponse(dirResponse, &extprocv3.CommonResponse{})}
	case *extprocv3.ProcessingRequest_RequestBody:
		if reqDuplex {
			return streamedResponses(dirRequest, r.RequestBody.GetBody(), r.RequestBody.GetEndOfStream())
		}
		return []*extprocv3.ProcessingResponse{bodyResponse(dirRequest, &extprocv3.CommonResponse{})}
	case *extprocv3.ProcessingRequest_ResponseBody:
		if respDuplex {
			return streamedResponses(dirResponse, r.ResponseBody.GetBody(), r.ResponseBody.GetEndOfStream())
		}
		return []*extprocv3.ProcessingResponse{bodyResponse(dirResponse, &extprocv3.CommonResponse{})}
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return []*extprocv3.ProcessingResponse{trailersResponse(dirRequest)}
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return []*extprocv3.ProcessingResponse{trailersResponse(dirResponse)}
	}
	return nil
}
