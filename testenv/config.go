package testenv

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	extprocfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	"google.golang.org/protobuf/proto"
)

// Defaults that mirror Envoy's (docs/envoy-notes.md §2, §5, §9).
const (
	DefaultMessageTimeout    = 200 * time.Millisecond
	DefaultBufferLimit       = 1 << 20
	DefaultStatusOnError     = 500
	DefaultStreamIdleTimeout = 5 * time.Minute
)

// RouteOverride mirrors ExtProcPerRoute for requests whose path starts with Prefix. Routes are matched
// in order and the first match wins, as in an Envoy route table.
type RouteOverride struct {
	Prefix          string
	Disabled        bool                            // ExtProcPerRoute.disabled: no stream is opened
	Mode            *extprocfilterv3.ProcessingMode // overrides.processing_mode: replaces the whole mode
	InitialMetadata map[string]string               // overrides.grpc_initial_metadata, merged by key
}

// ProxyConfig configures the stand-in. Zero values take Envoy's defaults.
type ProxyConfig struct {
	// ExtProcAddr is the processor's gRPC address. Empty means no ext_proc filter at all: a plain proxy.
	ExtProcAddr string
	// UpstreamURL is where requests go, e.g. "http://127.0.0.1:18080". The request :path is appended.
	UpstreamURL string
	// Mode is the filter-level processing_mode. Nil means request headers SEND, body BUFFERED; response
	// headers SEND, body FULL_DUPLEX_STREAMED, trailers SEND.
	Mode              *extprocfilterv3.ProcessingMode
	AllowModeOverride bool
	FailureModeAllow  bool
	// SendBodyWithoutWaitingForHeaderResponse mirrors the filter field of the same name (§3.1): STREAMED
	// bodies go out before the headers response, and mode_override is not honoured.
	SendBodyWithoutWaitingForHeaderResponse bool
	MessageTimeout                          time.Duration // default 200ms
	MaxMessageTimeout                       time.Duration // default 0: override_message_timeout disabled
	BufferLimit                             int           // default 1 MiB (per_connection_buffer_limit_bytes)
	StatusOnError                           int           // default 500; only 4xx/5xx are accepted
	// StreamIdleTimeout mirrors the HCM stream_idle_timeout (default 5m): nothing happening for that long
	// ends the exchange with 504, or a reset once response headers went out. It is the only bound on a
	// stalled processor in FULL_DUPLEX_STREAMED, where no message timeout runs (§3.2).
	StreamIdleTimeout time.Duration
	InitialMetadata   map[string]string // grpc_service.initial_metadata
	Routes            []RouteOverride
	// RequestChunker and ResponseChunker cut bodies into the data chunks the filter sees. Nil means
	// realistic random sizes up to 16 KiB, sometimes with an empty final chunk.
	RequestChunker, ResponseChunker Chunker
	// StreamRequestBody delivers the request body to the filter as the client sends it. By default the
	// whole client body is read first and every chunk reaches the filter while the request_headers
	// message is outstanding, which is what Envoy sees for a request that fits one socket read (the
	// common case for LLM calls, §3.2 "whole body arrived before the headers response").
	StreamRequestBody bool
	// AllowContentLengthHeader mirrors allow_content_length_header (1.38+): never remove content-length.
	AllowContentLengthHeader bool
	// DuplicateFinalChunk is an adversarial knob (§12.11): in FULL_DUPLEX_STREAMED, send the final
	// end_of_stream body message twice, as envoyproxy/envoy#46237 reports.
	DuplicateFinalChunk bool
	// AbortResponseAfter is an adversarial knob (§12.11): after this many response body bytes reached
	// the client, the client "disconnects": the side stream is reset and the client sees a truncated
	// response. 0 disables it.
	AbortResponseAfter int
	Logger             *slog.Logger
}

// withDefaults returns a copy with Envoy's defaults filled in.
func (c ProxyConfig) withDefaults() ProxyConfig {
	if c.MessageTimeout <= 0 {
		c.MessageTimeout = DefaultMessageTimeout
	}
	if c.BufferLimit <= 0 {
		c.BufferLimit = DefaultBufferLimit
	}
	// Envoy accepts only 4xx/5xx for status_on_error and falls back to 500 (§9).
	if c.StatusOnError < 400 || c.StatusOnError > 599 {
		c.StatusOnError = DefaultStatusOnError
	}
	if c.StreamIdleTimeout <= 0 {
		c.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	if c.Mode == nil {
		c.Mode = DefaultMode()
	} else {
		c.Mode = cloneMode(c.Mode)
	}
	if c.RequestChunker == nil {
		c.RequestChunker = defaultChunker
	}
	if c.ResponseChunker == nil {
		c.ResponseChunker = defaultChunker
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate does the checks Envoy's config loader does (§2 "Config validation", §11.3): Go's Validate()
// misses them, so a config the stand-in accepts is one Envoy would load.
func (c ProxyConfig) validate() error {
	if c.UpstreamURL == "" {
		return errors.New("testenv: UpstreamURL is required")
	}
	u, err := url.Parse(c.UpstreamURL)
	if err != nil {
		return fmt.Errorf("testenv: UpstreamURL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("testenv: UpstreamURL %q: scheme must be http or https", c.UpstreamURL)
	}
	if err := validateMode("Mode", c.Mode, true); err != nil {
		return err
	}
	for i, r := range c.Routes {
		if r.Mode != nil {
			if err := validateMode(fmt.Sprintf("Routes[%d].Mode", i), r.Mode, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateMode(name string, m *extprocfilterv3.ProcessingMode, filterLevel bool) error {
	for _, bm := range []extprocfilterv3.ProcessingMode_BodySendMode{m.GetRequestBodyMode(), m.GetResponseBodyMode()} {
		if bm == extprocfilterv3.ProcessingMode_GRPC {
			return fmt.Errorf("testenv: %s: body mode GRPC is not supported by the stand-in", name)
		}
		if _, ok := extprocfilterv3.ProcessingMode_BodySendMode_name[int32(bm)]; !ok {
			return fmt.Errorf("testenv: %s: unknown body mode %d", name, bm)
		}
	}
	if !filterLevel {
		return nil
	}
	// Envoy rejects FULL_DUPLEX_STREAMED without trailer mode SEND in the same direction (CFG).
	if m.GetRequestBodyMode() == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED &&
		m.GetRequestTrailerMode() != extprocfilterv3.ProcessingMode_SEND {
		return fmt.Errorf("testenv: %s: request_body_mode FULL_DUPLEX_STREAMED requires request_trailer_mode SEND", name)
	}
	if m.GetResponseBodyMode() == extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED &&
		m.GetResponseTrailerMode() != extprocfilterv3.ProcessingMode_SEND {
		return fmt.Errorf("testenv: %s: response_body_mode FULL_DUPLEX_STREAMED requires response_trailer_mode SEND", name)
	}
	return nil
}

// DefaultMode is the processing mode used when ProxyConfig.Mode is nil.
func DefaultMode() *extprocfilterv3.ProcessingMode {
	return &extprocfilterv3.ProcessingMode{
		RequestHeaderMode:   extprocfilterv3.ProcessingMode_SEND,
		RequestBodyMode:     extprocfilterv3.ProcessingMode_BUFFERED,
		ResponseHeaderMode:  extprocfilterv3.ProcessingMode_SEND,
		ResponseBodyMode:    extprocfilterv3.ProcessingMode_FULL_DUPLEX_STREAMED,
		ResponseTrailerMode: extprocfilterv3.ProcessingMode_SEND,
	}
}

// ParseBodyMode accepts a BodySendMode name such as "BUFFERED" or "full_duplex_streamed".
func ParseBodyMode(s string) (extprocfilterv3.ProcessingMode_BodySendMode, error) {
	v, ok := extprocfilterv3.ProcessingMode_BodySendMode_value[strings.ToUpper(strings.TrimSpace(s))]
	if !ok || v == int32(extprocfilterv3.ProcessingMode_GRPC) {
		return 0, fmt.Errorf("unknown body mode %q (want NONE, STREAMED, BUFFERED, BUFFERED_PARTIAL or FULL_DUPLEX_STREAMED)", s)
	}
	return extprocfilterv3.ProcessingMode_BodySendMode(v), nil
}

func cloneMode(m *extprocfilterv3.ProcessingMode) *extprocfilterv3.ProcessingMode {
	return proto.Clone(m).(*extprocfilterv3.ProcessingMode)
}

// overrideMode builds the mode a mode_override produces (§6): the base is the filter-level mode, header
// and trailer DEFAULT leave the base alone, body modes are taken verbatim (unset becomes NONE).
func overrideMode(base, o *extprocfilterv3.ProcessingMode) *extprocfilterv3.ProcessingMode {
	m := cloneMode(base)
	if o.GetRequestHeaderMode() != extprocfilterv3.ProcessingMode_DEFAULT {
		m.RequestHeaderMode = o.GetRequestHeaderMode()
	}
	if o.GetResponseHeaderMode() != extprocfilterv3.ProcessingMode_DEFAULT {
		m.ResponseHeaderMode = o.GetResponseHeaderMode()
	}
	if o.GetRequestTrailerMode() != extprocfilterv3.ProcessingMode_DEFAULT {
		m.RequestTrailerMode = o.GetRequestTrailerMode()
	}
	if o.GetResponseTrailerMode() != extprocfilterv3.ProcessingMode_DEFAULT {
		m.ResponseTrailerMode = o.GetResponseTrailerMode()
	}
	m.RequestBodyMode = o.GetRequestBodyMode()
	m.ResponseBodyMode = o.GetResponseBodyMode()
	return m
}

// matchRoute returns the first route whose prefix matches path, or nil.
func (c ProxyConfig) matchRoute(path string) *RouteOverride {
	for i := range c.Routes {
		if strings.HasPrefix(path, c.Routes[i].Prefix) {
			return &c.Routes[i]
		}
	}
	return nil
}
