package testenv

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Sentinels that unwind the event loop.
var (
	errFinished   = errors.New("exchange finished")         // a local reply was written
	errAbortReply = errors.New("reset downstream")          // the client must see a reset
	errClientGone = errors.New("client went away")          // nothing more to write
	errUpstream   = errors.New("upstream reset mid-stream") // the upstream body broke
)

// exchange is one HTTP request/response pair. Like Envoy's per-stream filter, it is driven by one
// goroutine (the handler's) that reacts to events: processor messages, client body data, upstream
// response data, timers. Only that goroutine touches the state below.
type exchange struct {
	p   *Proxy
	cfg *ProxyConfig
	log *slog.Logger
	w   http.ResponseWriter
	r   *http.Request

	ctx    context.Context // the exchange: cancels the upstream request and helper goroutines
	cancel context.CancelFunc

	filterMode *extprocfilterv3.ProcessingMode // mode_override base (§6): filter level, not per route
	md         metadata.MD                     // gRPC initial metadata: config merged with the route's

	// Processor stream state. complete mirrors Envoy's processing_complete_: once set, the processor
	// is not consulted any more and everything passes through.
	complete     bool
	stream       grpc.BidiStreamingClient[extprocv3.ProcessingRequest, extprocv3.ProcessingResponse]
	streamCancel context.CancelFunc
	streamClosed bool
	sentFirst    bool
	inbox        *mailbox

	req, resp *direction

	reqEvents chan bodyEvent     // StreamRequestBody: client body reads
	upEvents  chan upstreamEvent // upstream response events
	upBody    *streamBody
	upStart   time.Time

	clientHeadersSent bool
	clientBytes       int
	done              bool
}

func newExchange(p *Proxy, w http.ResponseWriter, r *http.Request) *exchange {
	ctx, cancel := context.WithCancel(r.Context())
	x := &exchange{
		p: p, cfg: &p.cfg, w: w, r: r,
		ctx: ctx, cancel: cancel,
		filterMode: p.cfg.Mode,
		inbox:      newMailbox(),
		upEvents:   make(chan upstreamEvent),
		reqEvents:  make(chan bodyEvent),
	}
	mode := p.cfg.Mode
	md := metadata.MD{}
	for k, v := range p.cfg.InitialMetadata {
		md.Set(k, v)
	}
	route := p.cfg.matchRoute(r.URL.Path)
	// No processor, or a disabled route: Envoy opens no stream and the filter passes everything (§6).
	x.complete = p.proc == nil || (route != nil && route.Disabled)
	if route != nil {
		if route.Mode != nil {
			mode = cloneMode(route.Mode) // overrides.processing_mode replaces the whole mode (§6)
		}
		for k, v := range route.InitialMetadata {
			md.Set(k, v) // grpc_initial_metadata is merged by key
		}
	}
	x.md = md
	x.req = newDirection(x, true, mode)
	x.resp = newDirection(x, false, mode)
	return x
}

// run drives the exchange to its end. It reports whether the client must see a reset.
func (x *exchange) run() (abort bool) {
	defer x.cleanup()
	reqHeaders := requestHeaderMap(x.r)
	rid, _ := reqHeaders.get("x-request-id")
	x.log = x.p.log.With("request_id", rid, "method", x.r.Method, "path", x.r.URL.Path)

	err := x.startRequest(reqHeaders)
	idle := time.NewTimer(x.cfg.StreamIdleTimeout)
	defer idle.Stop()
	msgTimer := time.NewTimer(time.Hour)
	defer msgTimer.Stop()
	for err == nil && !x.done {
		var timerC <-chan time.Time
		if dl := x.nextDeadline(); !dl.IsZero() {
			msgTimer.Reset(time.Until(dl))
			timerC = msgTimer.C
		}
		select {
		case <-x.inbox.ready:
			for _, ev := range x.inbox.take() {
				if err = x.onProcessorEvent(ev); err != nil || x.done {
					break
				}
			}
		case ev := <-x.reqEvents:
			err = x.onRequestBody(ev)
		case ev := <-x.upEvents:
			err = x.onUpstream(ev)
		case <-timerC:
			err = x.onTimer()
		case <-idle.C:
			err = x.onIdleTimeout()
		case <-x.r.Context().Done():
			err = errClientGone
		}
		idle.Reset(x.cfg.StreamIdleTimeout)
	}
	switch {
	case err == nil, errors.Is(err, errFinished):
		return false
	case errors.Is(err, errClientGone):
		x.log.Debug("client went away")
		return false
	default:
		x.log.Info("resetting downstream", "reason", err)
		return true
	}
}

// cleanup ends the processor stream and everything still running for this exchange.
func (x *exchange) cleanup() {
	// A client abort resets the side stream; every other end half-closes first (§9 "Stream closing").
	x.closeStream(x.r.Context().Err() == nil)
	if x.upBody != nil {
		x.upBody.abort(context.Canceled)
	}
	x.cancel()
}

// startRequest hands the request headers, and unless StreamRequestBody the whole body, to the filter.
func (x *exchange) startRequest(h *headerMap) error {
	if x.cfg.StreamRequestBody {
		if x.r.ContentLength == 0 {
			return x.req.onHeaders(h, true)
		}
		// Reading the body while the response is being written needs full duplex on HTTP/1.
		_ = http.NewResponseController(x.w).EnableFullDuplex()
		go x.readRequestBody()
		return x.req.onHeaders(h, false)
	}
	body, err := readBody(x.r)
	if err != nil {
		return errClientGone
	}
	x.req.sizeHint = len(body)
	trailers := realTrailers(x.r.Trailer)
	if err := x.req.onHeaders(h, len(body) == 0 && trailers == nil); err != nil {
		return err
	}
	if len(body) > 0 {
		for _, c := range splitForFilter(x.cfg.RequestChunker, body, trailers == nil) {
			if err := x.req.onData(c.data, c.eos); err != nil {
				return err
			}
		}
	}
	if trailers != nil {
		return x.req.onTrailers(trailers)
	}
	return nil
}

// bodyEvent is one client body read (StreamRequestBody).
type bodyEvent struct {
	data []byte
	last bool
	err  error
}

func (x *exchange) readRequestBody() {
	buf := make([]byte, 32<<10)
	for {
		n, err := x.r.Body.Read(buf)
		ev := bodyEvent{data: append([]byte(nil), buf[:n]...)}
		switch {
		case err == io.EOF:
			ev.last = true
		case err != nil:
			ev.err = err
		}
		select {
		case x.reqEvents <- ev:
		case <-x.ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

func (x *exchange) onRequestBody(ev bodyEvent) error {
	if ev.err != nil {
		return errClientGone
	}
	var trailers *headerMap
	if ev.last {
		trailers = realTrailers(x.r.Trailer)
	}
	if len(ev.data) > 0 || ev.last {
		for _, c := range splitForFilter(x.cfg.RequestChunker, ev.data, ev.last && trailers == nil) {
			if err := x.req.onData(c.data, c.eos); err != nil {
				return err
			}
		}
	}
	if trailers != nil {
		return x.req.onTrailers(trailers)
	}
	return nil
}

// --- processor stream ---

// procEvent is a message or the final status from the processor stream.
type procEvent struct {
	resp *extprocv3.ProcessingResponse
	err  error // io.EOF: the processor closed the stream with OK
}

// mailbox is an unbounded queue from the receiving goroutine to the event loop, so gRPC reads never
// wait on the loop (which may itself be blocked sending to the processor).
type mailbox struct {
	mu    sync.Mutex
	items []procEvent
	ready chan struct{}
}

func newMailbox() *mailbox { return &mailbox{ready: make(chan struct{}, 1)} }

func (m *mailbox) put(ev procEvent) {
	m.mu.Lock()
	m.items = append(m.items, ev)
	m.mu.Unlock()
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

func (m *mailbox) take() []procEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	items := m.items
	m.items = nil
	return items
}

// openStream opens the Process stream lazily, at the first message (§1), with the configured initial
// metadata as gRPC headers.
func (x *exchange) openStream() error {
	// Envoy opens the stream asynchronously and its message timer runs meanwhile, so a processor
	// that accepts connections but never completes the handshake costs one message timeout (§9).
	if err := x.waitForConnection(); err != nil {
		if x.ctx.Err() != nil {
			return errClientGone
		}
		x.log.Info("processor connection not ready", "err", err)
		return x.fail(failTimeout, "ext_proc_error_per-message_timeout_exceeded")
	}
	ctx, cancel := context.WithCancel(x.ctx)
	ctx = metadata.NewOutgoingContext(ctx, x.md)
	s, err := x.p.proc.Process(ctx)
	if err != nil {
		cancel()
		return x.fail(failGRPC, grpcDetails(err))
	}
	x.stream, x.streamCancel = s, cancel
	go func() {
		for {
			resp, err := s.Recv()
			if err != nil {
				x.inbox.put(procEvent{err: err})
				return
			}
			x.inbox.put(procEvent{resp: resp})
		}
	}()
	return nil
}

// waitForConnection waits, at most one message timeout, until the processor connection is ready or
// has failed; a failed connection makes Process fail fast with Unavailable.
func (x *exchange) waitForConnection() error {
	conn := x.p.conn
	ctx, cancel := context.WithTimeout(x.ctx, x.cfg.MessageTimeout)
	defer cancel()
	conn.Connect()
	for {
		switch st := conn.GetState(); st {
		case connectivity.Ready, connectivity.TransientFailure:
			return nil
		case connectivity.Shutdown:
			return errors.New("processor connection shut down")
		default:
			if !conn.WaitForStateChange(ctx, st) {
				return ctx.Err()
			}
		}
	}
}

// closeStream ends the side stream: half-close then cancel, which the processor sees as io.EOF and
// usually codes.Canceled (§9). A reset skips the half-close.
func (x *exchange) closeStream(graceful bool) {
	if x.stream == nil || x.streamClosed {
		return
	}
	x.streamClosed = true
	if graceful {
		_ = x.stream.CloseSend()
	}
	x.streamCancel()
}

// send sends one message for direction d. needsReply arms d's message timer, except in
// FULL_DUPLEX_STREAMED where no timer runs (§3.2). It reports false when the processor is not consulted
// any more (fail-open while opening the stream); the caller must then return at once, because the
// held state has already been released.
func (x *exchange) send(d *direction, req *extprocv3.ProcessingRequest, needsReply bool) (bool, error) {
	if x.complete {
		return false, nil
	}
	if x.stream == nil {
		if err := x.openStream(); err != nil {
			return false, err
		}
		if x.complete {
			return false, nil
		}
	}
	// metadata_context is always set, empty without metadata_options (§1).
	req.MetadataContext = &corev3.Metadata{}
	if !x.sentFirst {
		// protocol_config rides on the first message of the stream only (§1).
		x.sentFirst = true
		req.ProtocolConfig = &extprocv3.ProtocolConfiguration{
			RequestBodyMode:                         x.req.bodyMode,
			ResponseBodyMode:                        x.resp.bodyMode,
			SendBodyWithoutWaitingForHeaderResponse: x.cfg.SendBodyWithoutWaitingForHeaderResponse,
		}
	}
	if needsReply && d.bodyMode != extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED {
		d.startTimer()
	}
	if err := x.stream.Send(req); err != nil {
		// io.EOF means the stream is over; Recv reports how, through the mailbox.
		x.log.Debug("send to processor failed", "err", err)
	}
	return true, nil
}

func (x *exchange) onProcessorEvent(ev procEvent) error {
	if x.complete || x.streamClosed {
		return nil // Envoy ignores messages after processing is complete or the stream closed
	}
	if ev.err != nil {
		if ev.err == io.EOF {
			// Closing with OK is not an error: continue without the processor (§9).
			x.log.Info("processor closed the stream; continuing unprocessed")
			return x.detach()
		}
		return x.fail(failGRPC, grpcDetails(ev.err))
	}
	err := x.handleResponse(ev.resp)
	var se *spuriousError
	switch {
	case err == nil:
		x.maybeCloseEarly()
		return nil
	case errors.As(err, &se):
		x.log.Info("spurious processor response", "why", se.why)
		return x.fail(failSpurious, se.details)
	case isMutationError(err):
		// Mutation errors always end in a local reply, whatever failure_mode_allow says (§9).
		x.log.Info("rejected processor mutation", "err", err)
		return x.localReply(x.cfg.StatusOnError, nil, nil, mutationDetails(err))
	}
	return err
}

// handleResponse dispatches one processor response, checking it against the callback state as Envoy
// does (§1 "Response discipline", §9 "Spurious").
func (x *exchange) handleResponse(resp *extprocv3.ProcessingResponse) error {
	// A timer extension is consumed whole; nothing else in the message is looked at (§1, §9).
	if resp.GetOverrideMessageTimeout() != nil {
		x.overrideTimeout(resp.GetOverrideMessageTimeout())
		return nil
	}
	if resp.GetModeOverride() != nil {
		x.applyModeOverride(resp.GetModeOverride())
	}
	switch r := resp.GetResponse().(type) {
	case *extprocv3.ProcessingResponse_RequestHeaders:
		return x.req.onHeadersResponse(r.RequestHeaders)
	case *extprocv3.ProcessingResponse_ResponseHeaders:
		return x.resp.onHeadersResponse(r.ResponseHeaders)
	case *extprocv3.ProcessingResponse_RequestBody:
		return x.req.onBodyResponse(r.RequestBody)
	case *extprocv3.ProcessingResponse_ResponseBody:
		return x.resp.onBodyResponse(r.ResponseBody)
	case *extprocv3.ProcessingResponse_RequestTrailers:
		return x.req.onTrailersResponse(r.RequestTrailers)
	case *extprocv3.ProcessingResponse_ResponseTrailers:
		return x.resp.onTrailersResponse(r.ResponseTrailers)
	case *extprocv3.ProcessingResponse_ImmediateResponse:
		return x.immediateResponse(r.ImmediateResponse)
	case nil:
		return &spuriousError{details: "unhandled_message", why: "response with no oneof set"}
	default:
		// StreamedImmediateResponse (1.37+) is not modelled; a server for this project never needs it.
		return &spuriousError{details: "unhandled_message", why: "unsupported response type"}
	}
}

// applyModeOverride honours mode_override only where Envoy does (§6): allow_mode_override set, no
// send_body_without_waiting_for_header_response, neither filter-level body mode FULL_DUPLEX_STREAMED,
// and a direction waiting for its headers response. It is applied before the response it rides on.
func (x *exchange) applyModeOverride(o *extprocfilterv3.ProcessingMode) {
	fd := extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED
	switch {
	case !x.cfg.AllowModeOverride:
		x.log.Debug("mode_override ignored: allow_mode_override is off")
	case x.cfg.SendBodyWithoutWaitingForHeaderResponse:
		x.log.Debug("mode_override ignored: send_body_without_waiting_for_header_response")
	case x.filterMode.GetRequestBodyMode() == fd || x.filterMode.GetResponseBodyMode() == fd:
		x.log.Debug("mode_override ignored: FULL_DUPLEX_STREAMED configured")
	case !x.req.awaitingHeaders && !x.resp.awaitingHeaders:
		x.log.Debug("mode_override ignored: not in a headers phase")
	default:
		m := overrideMode(x.filterMode, o)
		x.req.setMode(m)
		x.resp.setMode(m)
		x.log.Debug("mode overridden", "mode", m.String())
	}
}

// overrideTimeout handles override_message_timeout (§9): accepted only between 1ms and
// max_message_timeout (0 disables it), and at most once per callback state of each direction.
func (x *exchange) overrideTimeout(d *durationpb.Duration) {
	if d.CheckValid() != nil {
		return
	}
	dur := d.AsDuration()
	if dur < time.Millisecond || dur > x.cfg.MaxMessageTimeout {
		x.log.Debug("override_message_timeout ignored", "timeout", dur)
		return
	}
	x.req.restartTimer(dur)
	x.resp.restartTimer(dur)
}

func (x *exchange) nextDeadline() time.Time {
	a, b := x.req.deadline, x.resp.deadline
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func (x *exchange) onTimer() error {
	now := time.Now()
	for _, d := range []*direction{x.req, x.resp} {
		if !d.deadline.IsZero() && !now.Before(d.deadline) {
			d.deadline = time.Time{}
			x.log.Info("processor message timeout", "direction", d.name)
			return x.fail(failTimeout, "ext_proc_error_per-message_timeout_exceeded")
		}
	}
	return nil
}

func (x *exchange) onIdleTimeout() error {
	x.log.Info("stream idle timeout")
	x.complete = true
	x.closeStream(true)
	return x.localReply(http.StatusGatewayTimeout, nil, []byte("stream timeout"), "stream_idle_timeout")
}

// maybeCloseEarly closes the side stream as soon as no more messages can be needed (1.37+, §9).
func (x *exchange) maybeCloseEarly() {
	if x.stream != nil && !x.streamClosed && x.req.doneWithProcessor() && x.resp.doneWithProcessor() {
		x.log.Debug("closing processor stream early")
		x.closeStream(true)
	}
}

// --- upstream ---

// upstreamEvent is the upstream response's headers, one body read, or a failure.
type upstreamEvent struct {
	resp     *http.Response
	data     []byte
	last     bool
	trailers *headerMap
	err      error
	body     bool // data/last/trailers are set: a body read
}

// startUpstream sends the request upstream once the filter lets its headers continue.
func (x *exchange) startUpstream(h *headerMap, eos bool) error {
	method, _ := h.get(":method")
	path, _ := h.get(":path")
	target := strings.TrimSuffix(x.cfg.UpstreamURL, "/") + path
	var body io.ReadCloser = http.NoBody
	length := int64(0)
	var trailer http.Header
	if !eos {
		if len(x.r.Trailer) > 0 {
			trailer = http.Header{}
			for k := range x.r.Trailer {
				trailer[k] = nil
			}
		}
		x.upBody = newStreamBody(trailer)
		body = x.upBody
		length = -1 // chunked unless the filter kept content-length (§4)
		if v, ok := h.get("content-length"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
				length = n
			}
		}
	}
	req, err := http.NewRequestWithContext(x.ctx, method, target, body)
	if err != nil {
		return x.localReply(http.StatusBadRequest, nil, []byte("bad request"), "invalid_upstream_request")
	}
	req.ContentLength = length
	req.Trailer = trailer
	h.toHTTP(req.Header, upstreamSkip)
	// auto_host_rewrite, as on the LLM route of §10.
	req.Host = x.p.upstream.Host
	x.upStart = time.Now()
	go x.roundTrip(req)
	return nil
}

func (x *exchange) postUpstream(ev upstreamEvent) bool {
	select {
	case x.upEvents <- ev:
		return true
	case <-x.ctx.Done():
		return false
	}
}

func (x *exchange) roundTrip(req *http.Request) {
	resp, err := x.p.client.Do(req)
	if err != nil {
		x.postUpstream(upstreamEvent{err: err})
		return
	}
	defer resp.Body.Close()
	if !x.postUpstream(upstreamEvent{resp: resp}) || responseHasNoBody(req.Method, resp) {
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		ev := upstreamEvent{body: true, data: append([]byte(nil), buf[:n]...)}
		switch {
		case err == io.EOF:
			ev.last = true
			ev.trailers = realTrailers(resp.Trailer)
		case err != nil:
			ev.err = err
		case n == 0:
			continue
		}
		if !x.postUpstream(ev) || err != nil {
			return
		}
	}
}

func (x *exchange) onUpstream(ev upstreamEvent) error {
	switch {
	case ev.resp != nil:
		h := responseHeaderMap(ev.resp, time.Since(x.upStart))
		return x.resp.onHeaders(h, responseHasNoBody(x.r.Method, ev.resp))
	case ev.body && ev.err == nil:
		last := ev.last && ev.trailers == nil
		if len(ev.data) > 0 || last {
			for _, c := range splitForFilter(x.cfg.ResponseChunker, ev.data, last) {
				if err := x.resp.onData(c.data, c.eos); err != nil {
					return err
				}
			}
		}
		if ev.trailers != nil {
			return x.resp.onTrailers(ev.trailers)
		}
		return nil
	case ev.body:
		x.log.Info("upstream body failed", "err", ev.err)
		return errUpstream
	default:
		// The router's own local reply; since 1.37 it goes through ext_proc's response path (§9).
		x.log.Info("upstream request failed", "err", ev.err)
		if x.resp.started {
			return errUpstream
		}
		body := []byte("upstream connect error or disconnect/reset before headers. reset reason: connection failure")
		h := &headerMap{}
		h.add(":status", "503")
		h.add("content-length", strconv.Itoa(len(body)))
		h.add("content-type", "text/plain")
		if err := x.resp.onHeaders(h, false); err != nil {
			return err
		}
		return x.resp.onData(body, true)
	}
}

// --- client response ---

func flush(w http.ResponseWriter) error { return http.NewResponseController(w).Flush() }

// writeClientHeaders sends the (processed) response headers to the client and flushes them.
func (x *exchange) writeClientHeaders(h *headerMap, eos bool) error {
	status := http.StatusOK
	if v, ok := h.get(":status"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			status = n
		}
	}
	h.toHTTP(x.w.Header(), responseHopByHop)
	x.w.WriteHeader(status)
	x.clientHeadersSent = true
	if err := flush(x.w); err != nil {
		return errClientGone
	}
	if eos {
		x.done = true
	}
	return nil
}

// writeClientData writes one chunk and flushes at once, so the client sees streamed bytes as soon as
// the filter releases them, as with Envoy.
func (x *exchange) writeClientData(b []byte, eos bool) error {
	if len(b) > 0 {
		if lim := x.cfg.AbortResponseAfter; lim > 0 && x.clientBytes+len(b) >= lim {
			// Adversarial knob: the client disappears mid-stream (§12.11).
			cut := lim - x.clientBytes
			_, _ = x.w.Write(b[:cut])
			_ = flush(x.w)
			x.closeStream(false)
			return errAbortReply
		}
		if _, err := x.w.Write(b); err != nil {
			return errClientGone
		}
		x.clientBytes += len(b)
		if err := flush(x.w); err != nil {
			return errClientGone
		}
	}
	if eos {
		x.done = true
	}
	return nil
}

func (x *exchange) writeClientTrailers(t *headerMap) error {
	if t != nil {
		for _, e := range t.entries {
			if !strings.HasPrefix(e.key, ":") {
				x.w.Header().Add(http.TrailerPrefix+e.key, e.value)
			}
		}
	}
	x.done = true
	return nil
}

// readBody reads a request body into one buffer sized by Content-Length
// when the client gave one: io.ReadAll would grow and copy it a dozen
// times for a 1 MB body (a third of the stand-in's CPU per request).
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 || r.ContentLength > 1<<30 {
		return io.ReadAll(r.Body)
	}
	buf := bytes.NewBuffer(make([]byte, 0, r.ContentLength+1)) // +1: ReadFrom sees EOF without growing
	_, err := buf.ReadFrom(r.Body)
	return buf.Bytes(), err
}
