package testenv

import (
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// Body send modes, shortened.
const (
	modeNone     = extprocfilterv3.ProcessingMode_NONE
	modeStreamed = extprocfilterv3.ProcessingMode_STREAMED
	modeBuffered = extprocfilterv3.ProcessingMode_BUFFERED
	modePartial  = extprocfilterv3.ProcessingMode_BUFFERED_PARTIAL
	modeDuplex   = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
)

// cbState is the body/trailer call a direction waits for (Envoy's CallbackState, §2). Waiting for the
// headers response is tracked separately in direction.awaitingHeaders.
type cbState int

const (
	cbIdle cbState = iota
	cbBufferedBody
	cbStreamedBody
	cbBufferedPartialBody
	cbTrailers
)

type queuedChunk struct {
	data []byte
	eos  bool
}

// direction is Envoy's ProcessorState for one direction: request (decoding) or response (encoding).
// It decides what goes to the processor, what is held, and what is passed on to the next hop.
type direction struct {
	x       *exchange
	request bool
	name    string

	sendHeaders, sendTrailers bool
	bodyMode                  extprocfilterv3.ProcessingMode_BodySendMode

	started         bool // the headers arrived
	awaitingHeaders bool // a headers message is outstanding
	cb              cbState
	deadline        time.Time // message timer; zero when stopped
	newTimeoutUsed  bool      // override_message_timeout already used in this state

	headers           *headerMap // held headers; nil once continued
	continued         bool       // the headers went to the next hop
	noBody            bool       // end_of_stream on the headers
	ended             bool       // end of stream went to the next hop
	completeBody      bool       // all body data (or the trailers) arrived
	trailersAvailable bool
	trailers          *headerMap // held trailers

	held         []byte // data held during the headers wait, or the BUFFERED buffer
	sizeHint     int    // the whole body's size when known: held grows once
	hasHeld      bool   // a data callback happened while holding (even an empty one)
	queue        []queuedChunk
	partialDone  bool // BUFFERED_PARTIAL: the partial body was processed, the rest passes through
	bodyReplaced bool // CONTINUE_AND_REPLACE replaced the body; later data is drained

	fdBodySent, fdBodyDone             bool
	fdTrailersSent, fdTrailersAnswered bool
}

func newDirection(x *exchange, request bool, mode *extprocfilterv3.ProcessingMode) *direction {
	d := &direction{x: x, request: request, name: "response"}
	if request {
		d.name = "request"
	}
	d.setMode(mode)
	return d
}

// setMode applies a mode the way Envoy's setProcessingModeInternal does (§2): header DEFAULT means
// SEND, trailer DEFAULT means SKIP.
func (d *direction) setMode(m *extprocfilterv3.ProcessingMode) {
	if d.request {
		d.sendHeaders = m.GetRequestHeaderMode() != extprocfilterv3.ProcessingMode_SKIP
		d.sendTrailers = m.GetRequestTrailerMode() == extprocfilterv3.ProcessingMode_SEND
		d.bodyMode = m.GetRequestBodyMode()
		return
	}
	d.sendHeaders = m.GetResponseHeaderMode() != extprocfilterv3.ProcessingMode_SKIP
	d.sendTrailers = m.GetResponseTrailerMode() == extprocfilterv3.ProcessingMode_SEND
	d.bodyMode = m.GetResponseBodyMode()
}

func (d *direction) isDuplex() bool { return d.bodyMode == modeDuplex }

// removesCL is Envoy's shouldRemoveContentLength while processing is active (§4 rule 1).
func (d *direction) removesCL() bool {
	return !d.x.complete && removesContentLength(d.bodyMode, d.sendHeaders, d.x.cfg.AllowContentLengthHeader)
}

// --- timers ---

func (d *direction) startTimer() {
	d.deadline = time.Now().Add(d.x.cfg.MessageTimeout)
	d.newTimeoutUsed = false
}

// stopTimer runs whenever a response is handled. In STREAMED the timer stays stopped until the next
// chunk is sent, even with chunks still unanswered (§9 "stopped between pipelined responses").
func (d *direction) stopTimer() {
	d.deadline = time.Time{}
	d.newTimeoutUsed = false
}

func (d *direction) restartTimer(dur time.Duration) {
	if !d.deadline.IsZero() && !d.newTimeoutUsed {
		d.deadline = time.Now().Add(dur)
		d.newTimeoutUsed = true
	}
}

func (d *direction) finishCall() {
	d.cb = cbIdle
	d.stopTimer()
}

// --- messages ---

func (d *direction) headersMsg(h *headerMap, eos bool) *extprocv3.ProcessingRequest {
	hh := &extprocv3.HttpHeaders{Headers: h.toProto(), EndOfStream: eos}
	if d.request {
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: hh}}
	}
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hh}}
}

func (d *direction) bodyMsg(b []byte, eos bool) *extprocv3.ProcessingRequest {
	hb := &extprocv3.HttpBody{Body: b, EndOfStream: eos}
	if d.request {
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestBody{RequestBody: hb}}
	}
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{ResponseBody: hb}}
}

func (d *direction) trailersMsg(t *headerMap) *extprocv3.ProcessingRequest {
	ht := &extprocv3.HttpTrailers{Trailers: t.toProto()}
	if d.request {
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestTrailers{RequestTrailers: ht}}
	}
	return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{ResponseTrailers: ht}}
}

// --- next hop (the upstream request, or the client response) ---

func (d *direction) sinkHeaders(h *headerMap, eos bool) error {
	if d.request {
		return d.x.startUpstream(h, eos)
	}
	return d.x.writeClientHeaders(h, eos)
}

func (d *direction) sinkData(b []byte, eos bool) error {
	if !d.request {
		return d.x.writeClientData(b, eos)
	}
	if d.x.upBody != nil {
		d.x.upBody.push(b)
		if eos {
			d.x.upBody.finish(nil)
		}
	}
	return nil
}

func (d *direction) sinkTrailers(t *headerMap) error {
	if !d.request {
		return d.x.writeClientTrailers(t)
	}
	if d.x.upBody != nil {
		d.x.upBody.finish(t)
	}
	return nil
}

func (d *direction) continueHeaders() error {
	if d.continued {
		return nil
	}
	d.continued = true
	h := d.headers
	d.headers = nil
	eos := d.noBody && !d.bodyReplaced
	if eos {
		d.ended = true
	}
	return d.sinkHeaders(h, eos)
}

func (d *direction) emitData(b []byte, eos bool) error {
	if d.ended {
		return nil
	}
	if err := d.continueHeaders(); err != nil || d.ended {
		return err
	}
	if len(b) == 0 && !eos {
		return nil
	}
	if eos {
		d.ended = true
	}
	return d.sinkData(b, eos)
}

func (d *direction) emitTrailers() error {
	if d.ended {
		return nil
	}
	if err := d.continueHeaders(); err != nil || d.ended {
		return err
	}
	t := d.trailers
	d.trailers = nil
	d.ended = true
	return d.sinkTrailers(t)
}

// resume lets everything held go on: headers, held data, then trailers (Envoy's continueIfNecessary).
func (d *direction) resume() error {
	if err := d.continueHeaders(); err != nil {
		return err
	}
	held := d.held
	d.held, d.hasHeld = nil, false
	if d.completeBody && !d.trailersAvailable {
		return d.emitData(held, true)
	}
	if err := d.emitData(held, false); err != nil {
		return err
	}
	if d.trailersAvailable {
		return d.emitTrailers()
	}
	return nil
}

// --- filter callbacks: what arrives from the client or the upstream ---

func (d *direction) onHeaders(h *headerMap, eos bool) error {
	d.started = true
	d.headers = h
	d.noBody = eos
	d.completeBody = eos
	if d.x.complete || !d.sendHeaders {
		// Header SKIP: the headers go on at once, but content-length still follows the body mode.
		if d.removesCL() {
			h.del("content-length")
		}
		if err := d.continueHeaders(); err != nil {
			return err
		}
		d.x.maybeCloseEarly()
		return nil
	}
	d.awaitingHeaders = true
	if sent, err := d.x.send(d, d.headersMsg(h, eos), true); err != nil || !sent {
		return err
	}
	// Removed right after the headers message went out, so the processor still sees it (§4 rule 1).
	if d.removesCL() {
		d.headers.del("content-length")
	}
	return nil
}

func (d *direction) onData(b []byte, eos bool) error {
	if eos {
		d.completeBody = true
	}
	switch {
	case d.bodyReplaced:
		// CONTINUE_AND_REPLACE put a new body in place; original data is drained (§4).
		if eos {
			return d.emitData(nil, true)
		}
		return nil
	case d.x.complete:
		return d.emitData(b, eos)
	case d.awaitingHeaders:
		// FULL_DUPLEX_STREAMED, and STREAMED with send_body_without_waiting_for_header_response, send
		// body before the headers response; everything else is held until it arrives (§3.1).
		if d.isDuplex() {
			return d.sendDuplexChunk(b, eos)
		}
		if d.bodyMode == modeStreamed && d.x.cfg.SendBodyWithoutWaitingForHeaderResponse {
			return d.sendStreamedChunk(b, eos)
		}
		return d.hold(b)
	}
	switch d.bodyMode {
	case modeBuffered:
		if err := d.hold(b); err != nil || !eos {
			return err
		}
		return d.sendBufferedBody(true)
	case modeStreamed:
		return d.sendStreamedChunk(b, eos)
	case modePartial:
		if d.partialDone {
			return d.emitData(b, eos)
		}
		d.queue = append(d.queue, queuedChunk{b, eos})
		if d.cb == cbBufferedPartialBody {
			return nil // queued, injected unprocessed after the partial response (§3.2)
		}
		if eos || d.queuedBytes() > d.x.cfg.BufferLimit {
			return d.sendPartial()
		}
		return nil
	case modeDuplex:
		return d.sendDuplexChunk(b, eos)
	default:
		return d.emitData(b, eos)
	}
}

func (d *direction) onTrailers(t *headerMap) error {
	bodyDelivered := d.completeBody
	d.completeBody = true
	d.trailersAvailable = true
	d.trailers = t
	if d.x.complete || d.bodyReplaced {
		return d.emitTrailers()
	}
	if d.isDuplex() {
		// Sent as soon as they arrive, without waiting for body responses (§3.2 FULL_DUPLEX step 4).
		if !d.sendTrailers {
			d.x.log.Info("trailers held: FULL_DUPLEX_STREAMED without trailer mode SEND", "direction", d.name)
			return nil
		}
		sent, err := d.x.send(d, d.trailersMsg(t), false)
		if err == nil && sent {
			d.fdTrailersSent = true
		}
		return err
	}
	if d.awaitingHeaders || d.cb != cbIdle {
		return nil // held until the outstanding call completes
	}
	if !bodyDelivered {
		// The trailers tell us the buffered body is complete: send it now, without end_of_stream.
		if d.bodyMode == modeBuffered && d.hasHeld {
			return d.sendBufferedBody(false)
		}
		if d.bodyMode == modePartial && len(d.queue) > 0 {
			return d.sendPartial()
		}
	}
	if !d.sendTrailers {
		return d.resume()
	}
	return d.sendTrailersMsg()
}

func (d *direction) hold(b []byte) error {
	if d.held == nil && d.sizeHint > len(b) {
		d.held = make([]byte, 0, d.sizeHint)
	}
	d.held = append(d.held, b...)
	d.hasHeld = true
	// BUFFERED overflows into the filter manager's "too large" path; the other modes only apply
	// backpressure (§5).
	if d.bodyMode == modeBuffered && len(d.held) > d.x.cfg.BufferLimit {
		return d.tooLarge()
	}
	return nil
}

func (d *direction) tooLarge() error {
	if d.request {
		return d.x.localReply(413, nil, []byte("Payload Too Large"), "request_payload_too_large")
	}
	return d.x.localReply(500, nil, []byte("Internal Server Error"), "response_payload_too_large")
}

func (d *direction) queuedBytes() int {
	n := 0
	for _, c := range d.queue {
		n += len(c.data)
	}
	return n
}

// --- sending body and trailers ---

func (d *direction) sendBufferedBody(eos bool) error {
	if sent, err := d.x.send(d, d.bodyMsg(d.held, eos), true); err != nil || !sent {
		return err
	}
	d.cb = cbBufferedBody
	return nil
}

func (d *direction) sendStreamedChunk(b []byte, eos bool) error {
	// Queued before sending: if the processor is dropped, the queue is re-injected unmodified.
	d.queue = append(d.queue, queuedChunk{b, eos})
	if sent, err := d.x.send(d, d.bodyMsg(b, eos), true); err != nil || !sent {
		return err
	}
	d.cb = cbStreamedBody
	return nil
}

// sendPartial consolidates the queue into one message (BUFFERED_PARTIAL). Envoy sends whole queued
// chunks, so the message can go past the limit by up to one chunk.
func (d *direction) sendPartial() error {
	var all queuedChunk
	for _, c := range d.queue {
		all.data = append(all.data, c.data...)
		all.eos = c.eos
	}
	d.queue = []queuedChunk{all}
	if sent, err := d.x.send(d, d.bodyMsg(all.data, all.eos), true); err != nil || !sent {
		return err
	}
	d.cb = cbBufferedPartialBody
	return nil
}

func (d *direction) sendDuplexChunk(b []byte, eos bool) error {
	sent, err := d.x.send(d, d.bodyMsg(b, eos), false)
	if err != nil {
		return err
	}
	if !sent {
		return d.emitData(b, eos) // the processor was dropped before it saw this chunk
	}
	d.fdBodySent = true
	if eos && d.x.cfg.DuplicateFinalChunk {
		// envoyproxy/envoy#46237: the end_of_stream message arrives twice (§12.11).
		_, err = d.x.send(d, d.bodyMsg(nil, true), false)
	}
	return err
}

func (d *direction) sendTrailersMsg() error {
	if sent, err := d.x.send(d, d.trailersMsg(d.trailers), true); err != nil || !sent {
		return err
	}
	d.cb = cbTrailers
	return nil
}

// --- processor responses ---

func (d *direction) spurious(why string) error {
	return &spuriousError{details: "spurious_message", why: d.name + ": " + why}
}

func (d *direction) mutateHeaders(hm *extprocv3.HeaderMutation, allowMethod bool) error {
	rep, err := applyHeaderMutation(d.headers, hm, mutationOptions{
		response:          !d.request,
		skipContentLength: d.removesCL(),
		allowMethod:       allowMethod,
	})
	if len(rep.ignored) > 0 {
		d.x.log.Debug("header mutations ignored", "direction", d.name, "ignored", rep.ignored)
	}
	return err
}

func (d *direction) onHeadersResponse(hr *extprocv3.HeadersResponse) error {
	if !d.awaitingHeaders {
		return d.spurious("headers response with no headers message outstanding")
	}
	cr := hr.GetResponse()
	replace := cr.GetStatus() == extprocv3.CommonResponse_CONTINUE_AND_REPLACE
	if hm := cr.GetHeaderMutation(); hm != nil && d.headers != nil {
		if err := d.mutateHeaders(hm, replace); err != nil {
			return err
		}
	}
	d.awaitingHeaders = false
	d.stopTimer()
	if replace {
		return d.continueAndReplace(cr.GetBodyMutation())
	}
	if d.noBody {
		return d.resume()
	}
	if d.isDuplex() {
		// Body and trailers normally went to the processor already. Data is held only when this
		// very response overrode the mode to FULL_DUPLEX_STREAMED (§6); it goes out now.
		if err := d.continueHeaders(); err != nil {
			return err
		}
		if d.hasHeld {
			held := d.held
			d.held, d.hasHeld = nil, false
			if err := d.sendDuplexChunk(held, d.completeBody && !d.trailersAvailable); err != nil || d.x.complete {
				return err
			}
		}
		if d.trailersAvailable && !d.fdTrailersSent && d.sendTrailers {
			if sent, err := d.x.send(d, d.trailersMsg(d.trailers), false); err != nil || !sent {
				return err
			}
			d.fdTrailersSent = true
		}
		return nil
	}
	if d.completeBody {
		if d.cb == cbStreamedBody {
			return d.continueHeaders() // send_body_without_waiting: every chunk is out already
		}
		if d.bodyMode != modeNone && d.hasHeld {
			// The whole body arrived before the headers response: one message, in BufferedBodyCallback
			// state whatever the mode, with the headers still held (§3.2 STREAMED special case).
			return d.sendBufferedBody(!d.trailersAvailable)
		}
	} else {
		switch d.bodyMode {
		case modeBuffered:
			return nil // headers stay held until the body is complete
		case modeStreamed:
			// Data that arrived during the wait goes as one coalesced chunk, then the headers go on.
			if len(d.held) > 0 {
				held := d.held
				d.held, d.hasHeld = nil, false
				if err := d.sendStreamedChunk(held, false); err != nil {
					return err
				}
			}
			return d.continueHeaders()
		case modePartial:
			if len(d.held) > 0 {
				d.queue = append(d.queue, queuedChunk{d.held, false})
				d.held, d.hasHeld = nil, false
			}
			if d.queuedBytes() > d.x.cfg.BufferLimit {
				return d.sendPartial()
			}
			return nil // headers stay held while the body is buffered up to the limit
		}
	}
	if d.sendTrailers && d.trailersAvailable {
		return d.sendTrailersMsg()
	}
	return d.resume()
}

// continueAndReplace handles CONTINUE_AND_REPLACE in a headers response (§4): the body mutation, if
// any, replaces the body (content-length goes), and this direction sends nothing more.
func (d *direction) continueAndReplace(bm *extprocv3.BodyMutation) error {
	d.queue = nil
	d.bodyMode = modeNone
	d.sendTrailers = false
	if bm == nil {
		return d.resume()
	}
	if d.headers != nil {
		d.headers.del("content-length")
	}
	d.bodyReplaced = true
	body := applyBodyMutation(d.held, bm)
	d.held, d.hasHeld = nil, false
	if err := d.continueHeaders(); err != nil {
		return err
	}
	if err := d.emitData(body, d.completeBody && !d.trailersAvailable); err != nil {
		return err
	}
	if d.trailersAvailable {
		return d.emitTrailers()
	}
	return nil
}

func (d *direction) onBodyResponse(br *extprocv3.BodyResponse) error {
	cr := br.GetResponse()
	bm := cr.GetBodyMutation()
	if d.isDuplex() {
		return d.onDuplexBodyResponse(cr)
	}
	if d.awaitingHeaders {
		return d.spurious("body response before the headers response")
	}
	if bm.GetStreamedResponse() != nil {
		return d.spurious("streamed_response outside FULL_DUPLEX_STREAMED")
	}
	switch d.cb {
	case cbBufferedBody:
		// The headers are still held, so this response's header mutation applies, then the
		// content-length check (§4 rule 2), then the body mutation.
		if hm := cr.GetHeaderMutation(); hm != nil && d.headers != nil {
			if err := d.mutateHeaders(hm, false); err != nil {
				return err
			}
		}
		if bm != nil {
			if err := checkMutatedContentLength(d.headers, bm); err != nil {
				return err
			}
			d.held = applyBodyMutation(d.held, bm)
		}
		d.finishCall()
		if d.sendTrailers && d.trailersAvailable {
			return d.sendTrailersMsg()
		}
		return d.resume()
	case cbStreamedBody:
		// Each response replaces its own chunk. Header mutations have no target any more: the headers
		// left with the headers response (§4).
		c := d.queue[0]
		d.queue = d.queue[1:]
		if len(d.queue) == 0 {
			d.cb = cbIdle
		}
		d.stopTimer()
		if err := d.emitData(applyBodyMutation(c.data, bm), c.eos); err != nil {
			return err
		}
		if len(d.queue) == 0 && d.trailersAvailable && !d.ended {
			if d.sendTrailers {
				return d.sendTrailersMsg()
			}
			return d.emitTrailers()
		}
		return nil
	case cbBufferedPartialBody:
		c, rest := d.queue[0], d.queue[1:]
		d.queue = nil
		if hm := cr.GetHeaderMutation(); hm != nil && d.headers != nil {
			if err := d.mutateHeaders(hm, false); err != nil {
				return err
			}
		}
		d.partialDone = true
		d.finishCall()
		if err := d.emitData(applyBodyMutation(c.data, bm), c.eos); err != nil {
			return err
		}
		// Whatever arrived while waiting goes on unprocessed.
		var left queuedChunk
		for _, q := range rest {
			left.data = append(left.data, q.data...)
			left.eos = q.eos
		}
		if err := d.emitData(left.data, left.eos); err != nil {
			return err
		}
		if d.trailersAvailable && !d.ended {
			if d.sendTrailers {
				return d.sendTrailersMsg()
			}
			return d.emitTrailers()
		}
		return nil
	}
	return d.spurious("body response with no body message outstanding")
}

// onDuplexBodyResponse handles FULL_DUPLEX_STREAMED body responses (§3.2): any number, each carrying
// streamed_response, injected as they arrive; header mutations are ignored.
func (d *direction) onDuplexBodyResponse(cr *extprocv3.CommonResponse) error {
	if d.awaitingHeaders {
		return d.spurious("body response before the headers response (FULL_DUPLEX_STREAMED)")
	}
	sr := cr.GetBodyMutation().GetStreamedResponse()
	if sr == nil {
		return d.spurious("FULL_DUPLEX_STREAMED body response without streamed_response")
	}
	if !d.fdBodySent || d.fdBodyDone || d.ended {
		return d.spurious("streamed body response with no body in flight")
	}
	if sr.GetEndOfStream() {
		d.fdBodyDone = true
	}
	return d.emitData(sr.GetBody(), sr.GetEndOfStream())
}

func (d *direction) onTrailersResponse(tr *extprocv3.TrailersResponse) error {
	if d.isDuplex() {
		if !d.fdTrailersSent || d.fdTrailersAnswered {
			if !d.trailersAvailable {
				// A trailers response the message never had trailers for is ignored (PR #40046).
				d.x.log.Debug("made-up trailers response ignored", "direction", d.name)
				return nil
			}
			return d.spurious("trailers response with no trailers message outstanding")
		}
		if d.awaitingHeaders {
			return d.spurious("trailers response before the headers response")
		}
		d.fdTrailersAnswered = true
	} else {
		if d.cb != cbTrailers {
			return d.spurious("trailers response with no trailers message outstanding")
		}
		d.finishCall()
	}
	if hm := tr.GetHeaderMutation(); hm != nil && d.trailers != nil {
		rep, err := applyHeaderMutation(d.trailers, hm, mutationOptions{trailers: true, response: !d.request})
		if err != nil {
			return err
		}
		if len(rep.ignored) > 0 {
			d.x.log.Debug("trailer mutations ignored", "direction", d.name, "ignored", rep.ignored)
		}
	}
	if d.isDuplex() {
		return d.emitTrailers()
	}
	return d.resume()
}

// release lets the direction go on without the processor (fail-open, or the processor closed the
// stream): held headers continue, queued and held data are re-injected unmodified (Envoy's
// clearAsyncState, §9). In FULL_DUPLEX_STREAMED what went to the processor is lost.
func (d *direction) release() error {
	d.awaitingHeaders = false
	d.cb = cbIdle
	d.stopTimer()
	if !d.started || d.ended {
		return nil
	}
	if d.isDuplex() && d.fdBodySent {
		if err := d.continueHeaders(); err != nil || !d.completeBody {
			return err
		}
		if d.trailersAvailable {
			return d.emitTrailers()
		}
		return d.emitData(nil, true)
	}
	var pending []byte
	for _, c := range d.queue {
		pending = append(pending, c.data...)
	}
	d.queue = nil
	if len(pending) > 0 {
		d.held = append(pending, d.held...)
	}
	return d.resume()
}

// doneWithProcessor reports that this direction can need no more processor messages, so the side
// stream may close (1.37+ early close, §9).
func (d *direction) doneWithProcessor() bool {
	nothingToProcess := !d.sendHeaders && d.bodyMode == modeNone && !d.sendTrailers
	if !d.started {
		return nothingToProcess
	}
	if d.awaitingHeaders || d.cb != cbIdle || len(d.queue) > 0 {
		return false
	}
	if d.ended {
		return true
	}
	return d.continued && d.bodyMode == modeNone && !d.sendTrailers
}
