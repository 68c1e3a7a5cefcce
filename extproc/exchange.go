package extproc

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/stream"
	"github.com/toolproc/toolproc/filters/wire"
)

// exchange is one HTTP request/response pair: one ext_proc stream. It
// holds what Envoy told it about the exchange and composes the concerns,
// each owning its state: the request rewrite (rewrite_state.go), answering
// expand_context (expansion_state.go), overflow recovery
// (recovery_state.go) and the bill (billing.go). It is used by one
// goroutine only.
type exchange struct {
	srv     *Server
	profile *compiledProfile
	log     *slog.Logger
	// ctx is the ext_proc stream's context: cancelled when Envoy resets the
	// stream (the client went away). Every replay, store call and summary
	// made for this exchange runs under it.
	ctx context.Context

	sawProtocolConfig bool
	endpoint          wire.Endpoint
	dialect           wire.Dialect
	process           bool // an LLM request this profile rewrites
	bypass            bool // the request opted out (x-toolproc-bypass)
	path              string

	req  bodyStream
	resp bodyStream

	extended [2]bool // override_message_timeout sent, per direction
	// send writes a response at once, ahead of handle's return value;
	// Process sets it. Used for continuation bytes and timer extensions.
	send func(*extprocv3.ProcessingResponse) error

	rewrite   rewriteState
	expansion expansionState
	recovery  recoveryState

	// What the provider billed, read from the answer and the replays, and
	// whether the exchange's end was recorded (billing.go).
	bill     billing
	finished bool
}

// extprocv3FullDuplex is the mode in which answers are M:N and no message
// timer runs.
const extprocv3FullDuplex = extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED

func newExchange(s *Server, p *compiledProfile) *exchange {
	x := &exchange{srv: s, profile: p, log: s.log, ctx: context.Background()}
	x.req = bodyStream{dir: dirRequest, maxHold: s.cfg.Server.MaxRecvMsgBytes, onGiveUp: x.gaveUp}
	// An answer is held whole only to rewrite it (expand_context in a
	// JSON answer, JSON→SSE); past the cap it passes through as it came
	// (review finding 11: a 100 MiB answer was held whole).
	x.resp = bodyStream{dir: dirResponse, maxHold: s.cfg.Server.MaxResponseHoldBytes, onGiveUp: x.gaveUp}
	return x
}

// handle returns the answers to one message. Outside FULL_DUPLEX_STREAMED
// that is exactly one answer per message, except that deferred STREAMED
// chunks are answered together when the body ends (still one each, in order).
// A panic anywhere below is recovered here and the exchange fails open
// (failopen.go): nothing that panics may take the process or the request
// down.
func (x *exchange) handle(m *extprocv3.ProcessingRequest) (resps []*extprocv3.ProcessingResponse) {
	start := time.Now()
	phase := phaseOf(m)
	if !x.sawProtocolConfig {
		// protocol_config rides only on the first message of the stream
		// (docs/envoy-notes.md §1); without it (Envoy <1.34) we stay mode-agnostic.
		if pc := m.GetProtocolConfig(); pc != nil {
			x.req.mode, x.req.known = pc.GetRequestBodyMode(), true
			x.resp.mode, x.resp.known = pc.GetResponseBodyMode(), true
		}
		x.sawProtocolConfig = true
	}
	defer func() {
		if v := recover(); v != nil {
			x.srv.metrics.Passthrough.WithLabelValues(reasonInternalError).Inc()
			x.log.Error("panic while processing message; passing through", "phase", phase, "panic", v)
			resps = x.failOpen(m)
		}
		x.countAnswers(resps)
		x.srv.metrics.Duration.WithLabelValues(phase).Observe(time.Since(start).Seconds())
	}()
	return x.dispatch(m)
}

func phaseOf(m *extprocv3.ProcessingRequest) string {
	switch m.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return "request_headers"
	case *extprocv3.ProcessingRequest_RequestBody:
		return "request_body"
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return "request_trailers"
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return "response_headers"
	case *extprocv3.ProcessingRequest_ResponseBody:
		return "response_body"
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		return "response_trailers"
	}
	return "other"
}

// dispatch routes one message to its direction's handler.
func (x *exchange) dispatch(m *extprocv3.ProcessingRequest) []*extprocv3.ProcessingResponse {
	switch r := m.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return []*extprocv3.ProcessingResponse{x.onRequestHeaders(r.RequestHeaders)}
	case *extprocv3.ProcessingRequest_RequestBody:
		return x.req.onBody(r.RequestBody)
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return x.req.onTrailers()
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		if r := x.withReceipt(x.onResponseHeaders(r.ResponseHeaders)); r != nil {
			return []*extprocv3.ProcessingResponse{r}
		}
		return nil
	case *extprocv3.ProcessingRequest_ResponseBody:
		if x.recovery.held != nil {
			return x.onHeldErrorBody(r.ResponseBody)
		}
		return x.resp.onBody(r.ResponseBody)
	case *extprocv3.ProcessingRequest_ResponseTrailers:
		if x.recovery.held != nil {
			return append(x.finishHeldError(false), trailersResponse(dirResponse))
		}
		return x.resp.onTrailers()
	}
	return nil
}

func (x *exchange) onRequestHeaders(h *extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
	hm := h.GetHeaders()
	x.path = getHeader(hm, ":path")
	x.endpoint = wire.Classify(x.path)
	x.dialect = x.endpoint.Dialect
	x.log = x.log.With("dialect", string(x.dialect), "profile", x.profile.name, "path", pathForLog(x.path))

	method := getHeader(hm, ":method")
	encoding := strings.ToLower(strings.TrimSpace(getHeader(hm, "content-encoding")))
	switch {
	case x.dialect == wire.Unknown && !x.endpoint.Ambiguous, method != "POST", h.GetEndOfStream():
	case x.srv.cfg.Server.ClientBypass && strings.TrimSpace(getHeader(hm, BypassHeader)) == "1":
		// The client opted out for this request: both ways untouched. The
		// header stays on the request (byte-identical), and the mode
		// override below skips both bodies where Envoy allows it; bodies
		// that still come are answered unchanged.
		x.bypass = true
		x.srv.metrics.Bypass.WithLabelValues(string(x.dialect)).Inc()
		x.srv.metrics.Requests.WithLabelValues(string(x.dialect), x.profile.name, outcomeBypassed).Inc()
	case !x.profile.Enabled, !x.endpoint.Ambiguous && !x.profile.Handles(x.dialect):
		x.srv.metrics.Requests.WithLabelValues(string(x.dialect), x.profile.name, outcomeSkipped).Inc()
	case encoding != "" && encoding != "identity":
		// Envoy never decodes bodies for ext_proc (docs/envoy-notes.md §4); a
		// compressed request body is forwarded as it came.
		x.passThroughRequest(reasonContentEncoding, "compressed request body passed through", "content_encoding", encoding)
	case getHeader(hm, ReplayHeader) != "":
		// A request toolproc sent itself has come back through a listener
		// with ext_proc (replay_url pointed at the ingress by mistake):
		// processing it would start a new loop budget every time, so
		// continuations could chain without end (review finding 23).
		x.passThroughRequest(reasonReplayLoop, "a replay came back through ext_proc; check server.replay_url", "replay", getHeader(hm, ReplayHeader))
	case shadow.IsSigV4(getHeader(hm, "authorization")) && x.profile.SigV4 != SigV4Rewrite:
		// SigV4 signs the body: any change makes Bedrock answer 403, and a
		// replay would reuse a stale signature. Only when Envoy signs after
		// ext_proc (aws_request_signing placed after it, profile sigv4:
		// rewrite) may the body change.
		x.passThroughRequest(reasonSigV4, "SigV4-signed request passed through (profile sigv4: skip)")
	default:
		x.process = true
		x.rewrite.reqHeaders = hm
	}

	cr := &extprocv3.CommonResponse{}
	resp := headersResponse(dirRequest, cr)
	if !x.process {
		// Nothing to do for this exchange: ask Envoy to skip both bodies. It is
		// honoured only where Envoy allows overrides (allow_mode_override, no
		// FULL_DUPLEX in the filter config); elsewhere the bodies still come
		// and are answered unchanged. Both body modes are always set because
		// Envoy takes them verbatim (docs/envoy-notes.md §6).
		resp.ModeOverride = &extprocfilterv3.ProcessingMode{
			RequestBodyMode:  extprocfilterv3.ProcessingMode_NONE,
			ResponseBodyMode: extprocfilterv3.ProcessingMode_NONE,
		}
		return resp
	}
	x.req.rewrite = x.rewriteRequest
	var remove []string
	if x.req.known && x.req.mode != extprocfilterv3.ProcessingMode_BUFFERED {
		// Outside BUFFERED our body answers cannot fix content-length, and with
		// allow_content_length_header (1.38+) Envoy would keep the stale one.
		// Removing it here is a no-op where Envoy already does (§4.1).
		remove = append(remove, "content-length")
	}
	readsAnswers := x.profile.Stream.Normalize || x.profile.Compress.Enabled || x.profile.Recovery.Enabled
	if readsAnswers && getHeader(hm, "accept-encoding") != "" {
		// Envoy hands ext_proc the bytes as the upstream sent them and never
		// decodes (§4): asking for an identity answer keeps it repairable.
		remove = append(remove, "accept-encoding")
	}
	if len(remove) > 0 {
		cr.HeaderMutation = &extprocv3.HeaderMutation{RemoveHeaders: remove}
	}
	return resp
}

// onResponseHeaders decides how the answer is repaired. Successful answers
// of a request we processed are repaired (and expand_context answered);
// errors are held and classified when overflow recovery may apply. A nil
// result means the headers answer is deferred (FULL_DUPLEX_STREAMED error
// held until its body says whether to recover).
func (x *exchange) onResponseHeaders(h *extprocv3.HttpHeaders) *extprocv3.ProcessingResponse {
	cr := &extprocv3.CommonResponse{}
	resp := headersResponse(dirResponse, cr)
	if !x.process || x.rewrite.clientAsk == nil || h.GetEndOfStream() {
		return resp
	}
	hm := h.GetHeaders()
	status := getHeader(hm, ":status")
	x.verifyTenant(status)
	ct := getHeader(hm, "content-type")
	enc := strings.ToLower(strings.TrimSpace(getHeader(hm, "content-encoding")))
	d := string(x.dialect)
	if status != "200" {
		// An error may come gzip-encoded (a front proxy's HTML 413):
		// recovery reads it decoded (plainErrorBody).
		return x.onErrorHeaders(status, hm, resp)
	}
	if enc != "" && enc != "identity" {
		x.srv.metrics.Responses.WithLabelValues(d, "passthrough_encoded").Inc()
		return resp
	}
	repair, ok := x.planSuccess(ct)
	x.releaseBodies()
	x.watchAnswer(ct)
	mutation := &extprocv3.HeaderMutation{}
	if x.rewrite.tierStep > 0 {
		mutation.SetHeaders = append(mutation.SetHeaders, setHeader(TiersHeader, strconv.Itoa(x.rewrite.tierStep)))
	}
	if !ok {
		if len(mutation.SetHeaders) > 0 {
			cr.HeaderMutation = mutation
		}
		if x.resp.known && x.resp.mode == extprocfilterv3.ProcessingMode_NONE {
			// Configured without a response body: ask for it to read the
			// usage as it passes. Nothing in it changes, so content-length
			// stays (Envoy keeps it for an override, §4.3) and is right.
			// Ignored without allow_mode_override: the usage is then unread
			// (usage_answers_total{outcome="missing"}).
			resp.ModeOverride = &extprocfilterv3.ProcessingMode{
				RequestBodyMode:  x.req.mode,
				ResponseBodyMode: extprocfilterv3.ProcessingMode_STREAMED,
			}
			x.resp.mode = extprocfilterv3.ProcessingMode_STREAMED
		}
		return resp
	}
	x.srv.metrics.Responses.WithLabelValues(d, repair.Action).Inc()
	if repair.Stream != nil {
		x.resp.transform = repair.Stream
	} else {
		x.resp.rewrite = func(body []byte) ([]byte, bool, *extprocv3.ImmediateResponse) {
			out, changed := repair.Whole(body)
			return out, changed, nil
		}
	}
	if repair.ContentType != "" {
		mutation.SetHeaders = append(mutation.SetHeaders, setHeader("content-type", repair.ContentType))
	}
	if x.resp.known && x.resp.mode != extprocfilterv3.ProcessingMode_BUFFERED {
		// Streamed answers change length as they go; BUFFERED sets the exact
		// length in its body answer instead (§4).
		mutation.RemoveHeaders = append(mutation.RemoveHeaders, "content-length")
	}
	if x.resp.known && x.resp.mode == extprocfilterv3.ProcessingMode_NONE {
		// Configured without a response body: ask for it now. Honoured only
		// with allow_mode_override and no FULL_DUPLEX in the filter config;
		// content-length is not removed by Envoy for an override, hence the
		// removal above (§4.3, §6). If ignored, no body comes and nothing is
		// repaired.
		resp.ModeOverride = &extprocfilterv3.ProcessingMode{
			RequestBodyMode:  x.req.mode,
			ResponseBodyMode: extprocfilterv3.ProcessingMode_STREAMED,
		}
		x.resp.mode = extprocfilterv3.ProcessingMode_STREAMED
	}
	if len(mutation.SetHeaders) > 0 || len(mutation.RemoveHeaders) > 0 {
		cr.HeaderMutation = mutation
	}
	return resp
}

// releaseBodies drops the request bodies kept for replays once a 200
// answer shows none can come: the client's body feeds only the overflow
// rungs (still possible while a gate watches the stream's start; it calls
// GateDecided), the body last sent upstream only expansions (review
// finding 21: both were held for the whole, possibly minutes-long, answer).
func (x *exchange) releaseBodies() {
	if x.recovery.gate {
		return // the gate's rungs start from both
	}
	x.recovery.clientBody = nil
	if !x.expansion.expandable {
		x.rewrite.upstreamBody = nil
	}
}

// GateDecided implements stream.GateDecider: the stream did not open with
// an overflow (or was recovered), so no rung will run again.
func (x *exchange) GateDecided() {
	x.recovery.gate = false
	x.releaseBodies()
}

// planSuccess is the repair of a 200 answer with content type ct: stream
// normalization, expand_context answering, and the overflow gate for
// streams that open with an overflow error. ok=false leaves it untouched.
func (x *exchange) planSuccess(ct string) (stream.Repair, bool) {
	var repair stream.Repair
	var ok bool
	if x.profile.Stream.Normalize {
		repair, ok = stream.PlanRepair(x.dialect, ct, *x.rewrite.clientAsk, stream.Options{XMLToolCalls: x.profile.Stream.XMLToolCalls})
	}
	if x.expansion.expandable {
		repair, ok = x.planExpansion(ct, repair, ok)
	}
	if x.recoverable() && stream.IsSSE(ct) && repair.Whole == nil {
		var emit func([]byte) error
		if x.resp.known && x.resp.mode == extprocv3FullDuplex {
			emit = x.emitResponse
		}
		x.recovery.gate = true
		action := repair.Action
		if action == "" {
			action = "stream_gated"
		}
		repair = stream.Repair{
			Stream:      stream.NewOverflowGate(x.dialect, repair.Stream, x, emit),
			ContentType: repair.ContentType,
			Action:      action,
		}
		ok = true
	}
	return repair, ok
}

// rewriteRequest runs the profile's pipeline over a complete request body.
func (x *exchange) rewriteRequest(body []byte) ([]byte, bool, *extprocv3.ImmediateResponse) {
	m := x.srv.metrics
	if x.endpoint.Ambiguous {
		// The path could carry several body formats (Bedrock InvokeModel):
		// the body decides, and one we do not rewrite passes untouched.
		x.endpoint = wire.Detect(x.path, body)
		x.dialect = x.endpoint.Dialect
		if !x.profile.Handles(x.dialect) {
			return body, false, nil
		}
		x.log = x.log.With("dialect", string(x.dialect))
	}
	d := string(x.dialect)
	conv, perr := wire.ParseEndpoint(x.endpoint, body)
	if perr == nil {
		ask := conv.Ask(x.endpoint)
		x.rewrite.clientAsk = &ask
	} else if ask, ok := wire.AskOf(x.endpoint, body); ok {
		// Valid JSON the pipeline refuses (duplicate keys): the answer is
		// still read as the client asked.
		x.rewrite.clientAsk = &ask
	}
	var store shadow.Store
	if x.referencesAllowed(conv) {
		store = x.srv.store
	}
	ask := wire.ClientAsk{}
	if x.rewrite.clientAsk != nil {
		ask = *x.rewrite.clientAsk
	}
	ctx := withRequestDialect(withRequestHeaders(x.ctx, x.rewrite.reqHeaders), string(x.dialect))
	if x.profile.Compress.Enabled && (x.profile.Compress.Strategy == "llm" || x.profile.Compress.FallbackStrategy == "llm") {
		// Summaries take seconds; the request body's message timer must
		// allow them, and all of them together get one budget, inside the
		// extended timer (review finding 20).
		x.extendTimer(dirRequest)
		budget := time.Duration(x.profile.Compress.LLM.RequestBudget)
		if mt := time.Duration(x.srv.cfg.Server.MaxMessageTimeout); mt > 0 {
			budget = min(budget, mt/2)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	rr, err := requestRewrite{out: body, report: pipeline.Report{Dialect: x.dialect, BytesIn: len(body), BytesOut: len(body)}}, perr
	if perr == nil {
		rr, err = rewriteParsed(ctx, x.profile, store, x.refEnv(), x.endpoint, ask, conv)
	}
	out, rep := rr.out, rr.report
	m.BodyBytes.WithLabelValues("request", "in").Add(float64(len(body)))
	if err != nil {
		reason := reasonInternalError
		switch {
		case errors.Is(err, wire.ErrNotJSON):
			reason = reasonMalformedJSON
		case errors.Is(err, wire.ErrTooDeep):
			reason = reasonTooDeep
		case errors.Is(err, wire.ErrDuplicateKey):
			reason = reasonDuplicateKeys
		}
		m.Passthrough.WithLabelValues(reason).Inc()
		if x.profile.FailClosed() {
			m.Requests.WithLabelValues(d, x.profile.name, outcomeRejected).Inc()
			x.log.Warn("request rejected (failure_mode: closed)", "reason", reason, "error", err.Error(), "bytes", len(body))
			return nil, false, rejectReply(reason)
		}
		m.Requests.WithLabelValues(d, x.profile.name, outcomePassthrough).Inc()
		m.BodyBytes.WithLabelValues("request", "out").Add(float64(len(body)))
		x.log.Warn("request body passed through unchanged", "reason", reason, "error", err.Error(), "bytes", len(body))
		return body, false, nil
	}
	x.rewrite.model = rep.Model
	x.recovery.clientBody = body
	x.rewrite.markSent(out)
	x.recordCompression(rr)
	x.expansion.expandable = rr.injected
	x.rewrite.upstreamBody = out
	x.rewrite.report = &rep
	m.BodyBytes.WithLabelValues("request", "out").Add(float64(len(out)))
	m.ToolResults.WithLabelValues(d, "seen").Add(float64(rep.Results))
	if rr.shaped != nil {
		x.log.Info("request shaped for a text-only upstream", "system_messages", rr.shaped.SystemMessages,
			"tools", rr.shaped.Tools, "calls", rr.shaped.Calls, "results", rr.shaped.Results,
			"missing", rr.shaped.Missing, "unmatched", rr.shaped.Unmatched)
		if rr.shaped.SystemBytes > 10000 {
			// Seed 002: a system context this long is accepted, but worth a look.
			x.log.Warn("long system context injected into the first user message", "bytes", rr.shaped.SystemBytes)
		}
		if rr.shaped.Unmatched > 0 {
			x.log.Warn("tool results without a call in the request were left out", "unmatched", rr.shaped.Unmatched)
		}
	}
	if !rep.Changed() && !rr.injected && (rr.shaped == nil || !rr.shaped.Changed) {
		m.Requests.WithLabelValues(d, x.profile.name, outcomeUnchanged).Inc()
		x.rewrite.upstreamBody = body
		return body, false, nil
	}
	var before, after int
	for _, c := range rep.Changes {
		m.ToolResults.WithLabelValues(d, c.Filter).Inc()
		before += c.BytesBefore
		after += c.BytesAfter
	}
	m.ToolResultBytes.WithLabelValues(d, "before").Add(float64(before))
	m.ToolResultBytes.WithLabelValues(d, "after").Add(float64(after))
	m.Requests.WithLabelValues(d, x.profile.name, outcomeRewritten).Inc()
	x.log.Info("request rewritten", "tool_results", rep.Results, "changed", len(rep.Changes),
		"bytes_in", rep.BytesIn, "bytes_out", rep.BytesOut)
	return out, true, nil
}

// passThroughRequest leaves this exchange alone, counted and logged once.
func (x *exchange) passThroughRequest(reason, msg string, attrs ...any) {
	x.srv.metrics.Passthrough.WithLabelValues(reason).Inc()
	x.srv.metrics.Requests.WithLabelValues(string(x.dialect), x.profile.name, outcomePassthrough).Inc()
	x.log.Warn(msg, attrs...)
}

// referencesAllowed decides, once per exchange, whether results may be
// replaced by shadow references: there must be a replay path to answer
// expand_context, a store, the deployment secret, and a tenant. Callers
// without a credential, or with a placeholder key, would all be one tenant
// and read each other's originals (review finding 2); they get a tenant of
// their own conversation instead (review round 3, N1: without one the
// tiers dropped their old results for good), unless store.tenant_header
// names them.
func (x *exchange) referencesAllowed(conv *wire.Conversation) bool {
	if x.srv.replay == nil || x.srv.store == nil || x.srv.keys == nil {
		return false
	}
	keys, ok, err := x.srv.keys.get(x.ctx)
	if err != nil {
		x.srv.metrics.StoreErrors.WithLabelValues("secret").Inc()
		x.log.Warn("deployment secret unavailable; no references for now", "error", err.Error())
	}
	if !ok {
		return false
	}
	x.rewrite.keys = keys
	x.rewrite.tenant = keys.Tenant(headerMap(x.rewrite.reqHeaders), x.srv.cfg.Store.TenantHeader)
	if x.rewrite.tenant == shadow.Anonymous {
		x.rewrite.tenant = ""
		if conv != nil && x.srv.cfg.Store.KeylessReferences {
			x.rewrite.tenant = keys.ConversationTenant(conv.Scope())
		}
		if x.rewrite.tenant == "" {
			x.srv.metrics.Compress.WithLabelValues(string(x.dialect), "skipped_anonymous").Inc()
			return false
		}
		x.srv.metrics.Compress.WithLabelValues(string(x.dialect), "conversation_tenant").Inc()
	}
	x.rewrite.refs = true
	return true
}

// refEnv is what the compress step needs to write this caller's references.
func (x *exchange) refEnv() shadow.Env {
	return shadow.Env{Ctx: x.ctx, Tenant: x.rewrite.tenant, Keys: x.rewrite.keys}
}

func (x *exchange) gaveUp(reason string) {
	x.srv.metrics.Passthrough.WithLabelValues(reason).Inc()
	x.log.Warn("body passed through unchanged", "reason", reason)
}

// dynamicMetadata is what Envoy access logs can print as
// %DYNAMIC_METADATA(toolproc:bytes_saved)%.
func (x *exchange) dynamicMetadata() *structpb.Struct {
	if x.rewrite.report == nil {
		return nil
	}
	r := x.rewrite.report
	fields := map[string]any{
		"dialect":            string(x.dialect),
		"profile":            x.profile.name,
		"bytes_in":           float64(r.BytesIn),
		"bytes_out":          float64(r.BytesOut),
		"bytes_saved":        float64(r.BytesIn - r.BytesOut),
		"tool_results":       float64(r.Results),
		"results_changed":    float64(len(r.Changes)),
		"results_compressed": float64(x.rewrite.compressed),
		"expand_loops":       float64(x.expansion.loops),
		"tier_step":          float64(x.rewrite.tierStep),
		"receipt":            x.receipt().String(),
	}
	inner, err := structpb.NewStruct(fields)
	if err != nil {
		return nil
	}
	return &structpb.Struct{Fields: map[string]*structpb.Value{"toolproc": structpb.NewStructValue(inner)}}
}

func headersResponse(d direction, cr *extprocv3.CommonResponse) *extprocv3.ProcessingResponse {
	hr := &extprocv3.HeadersResponse{Response: cr}
	if d == dirRequest {
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{RequestHeaders: hr}}
	}
	return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseHeaders{ResponseHeaders: hr}}
}

// rejectReply is the local reply for failure_mode: closed.
func rejectReply(reason string) *extprocv3.ImmediateResponse {
	code := typev3.StatusCode_InternalServerError
	msg := "toolproc could not process this request"
	switch reason {
	case reasonMalformedJSON:
		code = typev3.StatusCode_BadRequest
		msg = "toolproc: request body is not valid JSON"
	case reasonTooDeep:
		code = typev3.StatusCode_BadRequest
		msg = "toolproc: request body nests JSON too deeply"
	case reasonDuplicateKeys:
		code = typev3.StatusCode_BadRequest
		msg = "toolproc: request body repeats a key in a JSON object"
	}
	body := `{"error":{"type":"toolproc_error","code":"` + reason + `","message":"` + msg + `"}}`
	return &extprocv3.ImmediateResponse{
		Status: &typev3.HttpStatus{Code: code},
		Headers: &extprocv3.HeaderMutation{
			SetHeaders: []*corev3.HeaderValueOption{setHeader("content-type", "application/json")},
		},
		Body:    []byte(body),
		Details: "toolproc_" + reason,
	}
}
