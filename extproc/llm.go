package extproc

import (
	"context"
	"fmt"
	"io"
	"net/http"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/shadow"
)

// replayPurposeCompress labels summarisation requests of the llm strategy.
const replayPurposeCompress = "compress"

// requestHeadersKey carries the client request's headers in the context a
// strategy gets, so the summariser can reuse the caller's credentials.
type requestHeadersKey struct{}

// requestDialectKey carries the client request's dialect, so credentials
// go to a summariser of the same provider only.
type requestDialectKey struct{}

func withRequestHeaders(ctx context.Context, hm *corev3.HeaderMap) context.Context {
	return context.WithValue(ctx, requestHeadersKey{}, hm)
}

func withRequestDialect(ctx context.Context, d string) context.Context {
	return context.WithValue(ctx, requestDialectKey{}, d)
}

// llmCompleter is the llm strategy's model, reached through Envoy's replay
// listener like every request toolproc sends (docs/design.md §1).
func (s *Server) llmCompleter(p *Profile) compress.Completer {
	if s.replay == nil || (p.Compress.Strategy != "llm" && p.Compress.FallbackStrategy != "llm") {
		return nil
	}
	return &replayCompleter{replay: s.replay, cfg: p.Compress.LLM}
}

type replayCompleter struct {
	replay *ReplayClient
	cfg    LLMConfig
}

// Complete implements compress.Completer.
func (c *replayCompleter) Complete(ctx context.Context, req compress.LLMRequest) (string, error) {
	body, err := compress.LLMRequestBody(c.cfg.Dialect, req)
	if err != nil {
		return "", err
	}
	hm := &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
		{Key: ":method", RawValue: []byte(http.MethodPost)},
		{Key: ":path", RawValue: []byte(c.cfg.Path)},
	}}
	for k, v := range compress.LLMRequestHeaders(c.cfg.Dialect) {
		hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: k, RawValue: []byte(v)})
	}
	if orig, _ := ctx.Value(requestHeadersKey{}).(*corev3.HeaderMap); orig != nil {
		if a := getHeader(orig, ":authority"); a != "" {
			hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: ":authority", RawValue: []byte(a)})
		}
		// Only credentials are forwarded, nothing else of the client's
		// request, and only where they belong (review finding 5): the
		// operator's named headers, or the caller's own credential when the
		// summariser speaks the caller's API (an Anthropic key must never
		// reach an OpenAI route).
		names := c.cfg.CredentialHeaders
		dialect, _ := ctx.Value(requestDialectKey{}).(string)
		if len(names) == 0 && c.cfg.ForwardCredentials && dialect == c.cfg.Dialect {
			names = shadow.CredentialHeaders[:]
		}
		for _, k := range names {
			if v := getHeader(orig, k); v != "" {
				hm.Headers = append(hm.Headers, &corev3.HeaderValue{Key: k, RawValue: []byte(v)})
			}
		}
	}
	resp, err := c.replay.Do(ctx, Replay{Purpose: replayPurposeCompress, Headers: hm, Body: body})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return "", fmt.Errorf("summariser answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("summariser answered %d", resp.StatusCode)
	}
	return compress.LLMResponseText(c.cfg.Dialect, b)
}
