package testenv

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/status"
)

// DetailsHeader carries what Envoy would log as %RESPONSE_CODE_DETAILS% on the stand-in's local replies
// (for example "spurious_message"). Envoy itself sends no such header; tests use it to tell replies apart.
const DetailsHeader = "X-Standin-Details"

// spuriousError is a response that does not fit the callback state (§9 "Spurious"): fail-closed
// unless failure_mode_allow.
type spuriousError struct {
	details string // response code details, e.g. "spurious_message"
	why     string // for logs
}

func (e *spuriousError) Error() string { return e.details + ": " + e.why }

type failKind int

const (
	failGRPC failKind = iota
	failTimeout
	failSpurious
)

func isMutationError(err error) bool {
	return errors.Is(err, errInvalidHeaderChar) || errors.Is(err, errInvalidRemoveChar) ||
		errors.Is(err, errTooManyMutations) || errors.Is(err, errContentLengthMismatch)
}

func mutationDetails(err error) string {
	for _, e := range []error{errInvalidHeaderChar, errInvalidRemoveChar, errTooManyMutations, errContentLengthMismatch} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "ext_proc_error_mutation"
}

// grpcDetails formats a stream failure the way Envoy reports it: ext_proc_error_gRPC_error_<code>{<msg>}.
func grpcDetails(err error) string {
	st := status.Convert(err)
	return fmt.Sprintf("ext_proc_error_gRPC_error_%d{%s}", int(st.Code()), strings.ReplaceAll(st.Message(), " ", "_"))
}

// canFailOpen is false once FULL_DUPLEX_STREAMED body data went to the processor (§9 canFailOpen).
func (x *exchange) canFailOpen() bool {
	return !(x.req.isDuplex() && x.req.fdBodySent) && !(x.resp.isDuplex() && x.resp.fdBodySent)
}

// fail handles a processor failure (§9): fail-open when allowed, otherwise a local reply with
// status_on_error (504 for a message timeout), or a reset once response headers went out.
func (x *exchange) fail(kind failKind, details string) error {
	if x.cfg.FailureModeAllow && x.canFailOpen() {
		x.log.Info("processor failure; failing open", "details", details)
		return x.detach()
	}
	code := x.cfg.StatusOnError
	if kind == failTimeout {
		code = http.StatusGatewayTimeout
	}
	x.log.Info("processor failure; local reply", "status", code, "details", details)
	return x.localReply(code, nil, nil, details)
}

// detach stops consulting the processor and lets both directions go on unmodified.
func (x *exchange) detach() error {
	x.complete = true
	x.closeStream(true)
	if err := x.req.release(); err != nil {
		return err
	}
	return x.resp.release()
}

// localReply ends the exchange with a reply Envoy generates itself. Once response headers reached the
// client that is impossible and the downstream stream is reset instead (§8, FM sendLocalReply).
func (x *exchange) localReply(code int, headers *headerMap, body []byte, details string) error {
	x.complete = true
	x.closeStream(true)
	if x.clientHeadersSent {
		x.log.Info("local reply after response headers; resetting", "status", code, "details", details)
		return errAbortReply
	}
	h := x.w.Header()
	for k := range h {
		delete(h, k)
	}
	if headers != nil {
		headers.toHTTP(h, responseHopByHop)
	}
	if len(body) > 0 {
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "text/plain")
		}
	} else {
		h.Set("Content-Length", "0")
	}
	if details != "" {
		h.Set(DetailsHeader, details)
	}
	x.w.WriteHeader(code)
	x.clientHeadersSent = true
	if len(body) > 0 && x.r.Method != http.MethodHead {
		_, _ = x.w.Write(body)
	}
	x.done = true
	return errFinished
}

// immediateResponse applies an ImmediateResponse, which Envoy accepts in any phase (§8): before the
// response headers reached the client it replaces the response, after that the stream is reset.
func (x *exchange) immediateResponse(ir *extprocv3.ImmediateResponse) error {
	details := strings.ReplaceAll(ir.GetDetails(), " ", "_")
	if x.clientHeadersSent {
		x.complete = true
		x.closeStream(true)
		x.log.Info("immediate response after response headers; resetting", "details", details)
		return errAbortReply
	}
	// A missing status, or one below 200, becomes 200.
	code := int(ir.GetStatus().GetCode())
	if code < 200 {
		code = 200
	}
	h := &headerMap{}
	// The filter's mutation rules apply, but failures are only logged and the entry dropped (§7).
	rep, _ := applyHeaderMutation(h, ir.GetHeaders(), mutationOptions{response: true, lenient: true})
	if len(rep.ignored) > 0 {
		x.log.Debug("immediate response header mutations ignored", "ignored", rep.ignored)
	}
	h.del(":status")
	body := ir.GetBody()
	if ct := x.r.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/grpc") {
		// gRPC callers get 200 with grpc-status and grpc-message (§8).
		grpcCode := grpcStatusFromHTTP(code)
		if gs := ir.GetGrpcStatus(); gs != nil {
			grpcCode = int(gs.GetStatus())
		}
		h.set("grpc-status", strconv.Itoa(grpcCode))
		if len(body) > 0 {
			h.set("grpc-message", url.PathEscape(string(body)))
		}
		h.set("content-type", "application/grpc")
		code, body = 200, nil
	}
	// Envoy sets content-type text/plain only if the mutation did not set one, and content-length
	// for a non-empty body; an empty body drops both (§8).
	if len(body) > 0 {
		h.set("content-length", strconv.Itoa(len(body)))
		if !h.has("content-type") {
			h.set("content-type", "text/plain")
		}
	} else if !h.has("grpc-status") {
		h.del("content-type")
		h.del("content-length")
	}
	x.log.Info("immediate response", "status", code, "details", details)
	return x.localReply(code, h, body, details)
}

// grpcStatusFromHTTP maps an HTTP status to a gRPC code as Envoy's Grpc::Utility does.
func grpcStatusFromHTTP(code int) int {
	switch code {
	case 400:
		return 13 // INTERNAL
	case 401:
		return 16 // UNAUTHENTICATED
	case 403:
		return 7 // PERMISSION_DENIED
	case 404:
		return 12 // UNIMPLEMENTED
	case 429, 502, 503, 504:
		return 14 // UNAVAILABLE
	}
	return 2 // UNKNOWN
}
