package extproc

import (
	"bytes"
	"strconv"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

type direction int

const (
	dirRequest direction = iota
	dirResponse
)

func (d direction) String() string {
	if d == dirRequest {
		return "request"
	}
	return "response"
}

// fullDuplexChunk bounds each streamed_response we send: the API recommends
// ≤64 KiB per message in FULL_DUPLEX_STREAMED (docs/envoy-notes.md §5).
const fullDuplexChunk = 64 << 10

// rewriteFunc turns a complete body into the body to forward. It returns
// changed=false to forward the original bytes untouched. It may also ask for
// an ImmediateResponse (fail closed) by returning a non-nil reply.
type rewriteFunc func(body []byte) (out []byte, changed bool, reply *extprocv3.ImmediateResponse)

// streamTransform repairs a body as it flows (filters/stream.Normalizer).
type streamTransform interface {
	Write(p []byte) []byte
	Close() []byte
}

// bodyObserver sees every body chunk as it arrives (filters/usage.Reader):
// it neither keeps nor changes it.
type bodyObserver interface {
	Write(p []byte)
}

// bodyStream answers the body messages of one direction according to the
// body mode Envoy announced in protocol_config. With neither rewrite nor
// transform every chunk passes through untouched. With rewrite the whole
// body is collected and rewritten once, however Envoy chose to deliver it.
// With transform each chunk is repaired as it arrives, so streams stay
// streams.
type bodyStream struct {
	dir       direction
	mode      extprocfilterv3.ProcessingMode_BodySendMode
	known     bool // protocol_config told us the mode (Envoy ≥1.34)
	rewrite   rewriteFunc
	transform streamTransform
	tap       bodyObserver // nil: nothing watches the chunks
	maxHold   int          // give up rewriting (pass through) past this many held bytes
	messages  int          // body messages seen (counted first, before anything can panic)
	answered  int          // body answers sent (exchange.countAnswers)

	buf     []byte
	pending int  // STREAMED chunk messages not yet answered
	eos     bool // end_of_stream seen: later data is a duplicate (envoy#46237)
	passed  bool // gave up rewriting; the rest passes through
	// transformGaveUp: the stream repair reported that it stopped holding
	// (a hold or event cap) and passes the rest through; counted once.
	transformGaveUp bool
	onGiveUp        func(reason string)

	// headers, when a rewrite sets it, rides on the whole-body answer: in
	// BUFFERED the headers are still held, so the answer's status and
	// content-type can change with its body (overflow recovery).
	headers *extprocv3.HeaderMutation
}

// onBody returns the responses for one body message: exactly one outside
// FULL_DUPLEX_STREAMED (possibly deferred, see STREAMED), any number inside.
func (b *bodyStream) onBody(msg *extprocv3.HttpBody) []*extprocv3.ProcessingResponse {
	duplex := b.duplex()
	b.messages++
	if b.eos {
		// Data after end_of_stream is ignored (docs/envoy-notes.md §12.11).
		if duplex {
			return nil
		}
		return []*extprocv3.ProcessingResponse{b.bodyResponse(nil)}
	}
	b.eos = msg.GetEndOfStream()
	chunk := msg.GetBody()
	if b.tap != nil {
		b.tap.Write(chunk)
	}

	if duplex {
		return b.onDuplexBody(chunk)
	}
	if b.transform != nil && !b.passed {
		return []*extprocv3.ProcessingResponse{b.transformChunk(chunk)}
	}
	if b.rewrite == nil || b.passed {
		return []*extprocv3.ProcessingResponse{b.bodyResponse(nil)}
	}
	if b.pending == 0 && b.eos {
		// The whole body in one message: BUFFERED, or STREAMED when the body
		// completed before our headers response (docs/envoy-notes.md §3.2).
		return []*extprocv3.ProcessingResponse{b.finishWhole(chunk)}
	}
	if !b.known || b.mode != extprocfilterv3.ProcessingMode_STREAMED {
		// BUFFERED_PARTIAL (or an Envoy that did not say): only part of the
		// document is ours to see, and the rest will pass unprocessed. Half a
		// JSON document cannot be rewritten, so forward it as is.
		b.giveUp(reasonPartialBody)
		return []*extprocv3.ProcessingResponse{b.bodyResponse(nil)}
	}
	// STREAMED in several chunks. Envoy pipelines the chunks and applies our
	// answers in order, so we defer the answers until end_of_stream and then
	// put the whole rewritten body in the first answer and clear the others.
	// If it never comes (trailers, or too big), every chunk is answered
	// unchanged: nothing is lost.
	b.buf = append(b.buf, chunk...)
	b.pending++
	if b.maxHold > 0 && len(b.buf) > b.maxHold {
		b.giveUp(reasonBodyTooLarge)
		return b.releasePending()
	}
	if !b.eos {
		return nil
	}
	out, changed, reply := b.rewrite(b.buf)
	if reply != nil {
		return []*extprocv3.ProcessingResponse{immediate(reply)}
	}
	if !changed {
		out = b.buf
	}
	resps := make([]*extprocv3.ProcessingResponse, 0, b.pending)
	resps = append(resps, b.bodyResponse(&extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: out}}))
	for i := 1; i < b.pending; i++ {
		resps = append(resps, b.bodyResponse(&extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_ClearBody{ClearBody: true}}))
	}
	b.pending, b.buf = 0, nil
	return resps
}

// finishWhole answers a message that holds the complete body.
func (b *bodyStream) finishWhole(body []byte) *extprocv3.ProcessingResponse {
	out, changed, reply := b.rewrite(body)
	if reply != nil {
		return immediate(reply)
	}
	if !changed {
		return b.bodyResponse(nil)
	}
	return b.replaceWhole(out)
}

// replaceWhole answers the message holding the whole body with a new body.
func (b *bodyStream) replaceWhole(out []byte) *extprocv3.ProcessingResponse {
	// BUFFERED with header SEND keeps content-length and rejects a body whose
	// length differs with a 500, even with failure_mode_allow; it must be set
	// in this same response (docs/envoy-notes.md §4.2). Where Envoy already
	// removed the header it silently skips ours, so setting it is always safe.
	hm := &extprocv3.HeaderMutation{
		SetHeaders: []*corev3.HeaderValueOption{setHeader("content-length", strconv.Itoa(len(out)))},
	}
	if b.headers != nil {
		hm.SetHeaders = append(hm.SetHeaders, b.headers.SetHeaders...)
		hm.RemoveHeaders = append(hm.RemoveHeaders, b.headers.RemoveHeaders...)
	}
	return bodyResponse(b.dir, &extprocv3.CommonResponse{
		HeaderMutation: hm,
		BodyMutation:   &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: out}},
	})
}

// transformChunk answers one body message of a transformed body outside
// FULL_DUPLEX_STREAMED. STREAMED answers may carry any length, so each
// chunk's answer holds what the transform released for it; the whole body in
// one message (BUFFERED) is repaired at once. Anything else (BUFFERED_PARTIAL,
// or an Envoy that did not say) would leave part of the body unrepaired, and
// a normalizer's held-back bytes lost, so it passes through untouched.
func (b *bodyStream) transformChunk(chunk []byte) *extprocv3.ProcessingResponse {
	streamed := b.known && b.mode == extprocfilterv3.ProcessingMode_STREAMED
	whole := b.messages == 1 && b.eos
	if !streamed && !whole {
		b.giveUp(reasonPartialBody)
		return b.bodyResponse(nil)
	}
	out := b.transform.Write(chunk)
	if b.eos {
		out = append(out, b.transform.Close()...)
	}
	b.noteTransformGaveUp()
	if !streamed {
		return b.replaceWhole(out)
	}
	if bytes.Equal(out, chunk) {
		return b.bodyResponse(nil)
	}
	if len(out) == 0 {
		return b.bodyResponse(&extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_ClearBody{ClearBody: true}})
	}
	return b.bodyResponse(&extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_Body{Body: out}})
}

func (b *bodyStream) onDuplexBody(chunk []byte) []*extprocv3.ProcessingResponse {
	if b.transform != nil && !b.passed {
		out := b.transform.Write(chunk)
		if b.eos {
			out = append(out, b.transform.Close()...)
		}
		b.noteTransformGaveUp()
		if len(out) == 0 && !b.eos {
			return nil // M:N: nothing released yet
		}
		return streamedResponses(b.dir, out, b.eos)
	}
	if b.rewrite == nil || b.passed {
		return streamedResponses(b.dir, chunk, b.eos)
	}
	b.buf = append(b.buf, chunk...)
	if b.maxHold > 0 && len(b.buf) > b.maxHold {
		b.giveUp(reasonBodyTooLarge)
		held := b.buf
		b.buf = nil
		return streamedResponses(b.dir, held, b.eos)
	}
	if !b.eos {
		// FULL_DUPLEX_STREAMED answers are M:N: nothing to say yet.
		return nil
	}
	out, changed, reply := b.rewrite(b.buf)
	if !changed {
		out = b.buf
	}
	b.buf = nil
	if reply != nil {
		return []*extprocv3.ProcessingResponse{immediate(reply)}
	}
	return streamedResponses(b.dir, out, true)
}

// onTrailers answers a trailers message. Trailers mean the body is over
// without end_of_stream on its last chunk.
func (b *bodyStream) onTrailers() []*extprocv3.ProcessingResponse {
	var resps []*extprocv3.ProcessingResponse
	duplex := b.known && b.mode == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	switch {
	case duplex && b.transform != nil && !b.passed && !b.eos:
		resps = append(resps, streamedResponses(b.dir, b.transform.Close(), false)...)
	case b.transform != nil && !b.passed && !b.eos:
		// STREAMED: the last chunk went without end_of_stream and a trailers
		// answer cannot carry body bytes, so the stream's closing material
		// (finish chunk, [DONE]) cannot be added. Counted; rare for LLM APIs.
		b.giveUp(reasonTrailers)
	case duplex && b.rewrite != nil && !b.passed && !b.eos:
		// The last body chunk precedes the trailers response and carries
		// end_of_stream=false (docs/envoy-notes.md §3.2, FULL_DUPLEX step 4).
		out := b.buf
		if o, changed, reply := b.rewrite(b.buf); reply == nil && changed {
			out = o
		}
		b.buf = nil
		resps = append(resps, streamedResponses(b.dir, out, false)...)
	case b.pending > 0:
		b.giveUp(reasonTrailers)
		resps = append(resps, b.releasePending()...)
	}
	b.eos = true
	return append(resps, trailersResponse(b.dir))
}

// releasePending answers every deferred STREAMED chunk unchanged.
func (b *bodyStream) releasePending() []*extprocv3.ProcessingResponse {
	resps := make([]*extprocv3.ProcessingResponse, 0, b.pending)
	for range b.pending {
		resps = append(resps, b.bodyResponse(nil))
	}
	b.pending, b.buf = 0, nil
	return resps
}

// noteTransformGaveUp counts, once, a stream repair that hit its hold or
// event cap: it released what it held, unchanged, and passes the rest of
// the stream through (review finding 11), reported as
// passthrough_total{reason="hold_limit"|"event_too_large"}.
func (b *bodyStream) noteTransformGaveUp() {
	if b.transformGaveUp || b.transform == nil {
		return
	}
	g, ok := b.transform.(interface{ GaveUp() string })
	if !ok {
		return
	}
	if reason := g.GaveUp(); reason != "" {
		b.transformGaveUp = true
		if b.onGiveUp != nil {
			b.onGiveUp(reason)
		}
	}
}

func (b *bodyStream) giveUp(reason string) {
	if b.passed {
		return
	}
	b.passed = true
	if b.onGiveUp != nil {
		b.onGiveUp(reason)
	}
}

// bodyResponse wraps a mutation (nil: forward unchanged) in the oneof that
// matches this direction.
func (b *bodyStream) bodyResponse(m *extprocv3.BodyMutation) *extprocv3.ProcessingResponse {
	return bodyResponse(b.dir, &extprocv3.CommonResponse{BodyMutation: m})
}

func bodyResponse(d direction, cr *extprocv3.CommonResponse) *extprocv3.ProcessingResponse {
	br := &extprocv3.BodyResponse{Response: cr}
	if d == dirRequest {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{RequestBody: br}}
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{ResponseBody: br}}
}

// streamedResponses splits body into FULL_DUPLEX_STREAMED answers. Every
// answer in that mode must carry streamed_response, even an empty final one
// (docs/envoy-notes.md §3.2, FULL_DUPLEX step 5).
func streamedResponses(d direction, body []byte, eos bool) []*extprocv3.ProcessingResponse {
	var resps []*extprocv3.ProcessingResponse
	for {
		n := min(len(body), fullDuplexChunk)
		last := n == len(body)
		sr := &extprocv3.StreamedBodyResponse{Body: body[:n], EndOfStream: eos && last}
		resps = append(resps, bodyResponse(d, &extprocv3.CommonResponse{
			BodyMutation: &extprocv3.BodyMutation{Mutation: &extprocv3.BodyMutation_StreamedResponse{StreamedResponse: sr}},
		}))
		body = body[n:]
		if last {
			return resps
		}
	}
}

func trailersResponse(d direction) *extprocv3.ProcessingResponse {
	tr := &extprocv3.TrailersResponse{}
	if d == dirRequest {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{RequestTrailers: tr}}
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{ResponseTrailers: tr}}
}

func immediate(r *extprocv3.ImmediateResponse) *extprocv3.ProcessingResponse {
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ImmediateResponse{ImmediateResponse: r}}
}
