package extproc

import (
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// errRouteRefused: a replay toward a path or authority that is not an LLM
// route toolproc recognises. The gRPC port is a trust boundary: whoever can
// reach it chooses :path, :authority and every header of the "request"
// toolproc replays, so a replay may only go where an LLM request goes
// (review finding 7). Locking the port down (loopback, Unix socket,
// AuthorizationPolicy, NetworkPolicy: README "Security") is the first
// defence; this is the second.
var errRouteRefused = errors.New("replay refused: not a recognised LLM route")

// llmRoutes are the provider routes a replay may target, after one of the
// configured prefixes (server.replay_path_prefixes): OpenAI Chat
// Completions and Responses, Anthropic Messages, Azure OpenAI deployments,
// Gemini (AI Studio and Vertex AI), Vertex AI partner models, Bedrock
// Converse and InvokeModel.
var llmRoutes = []*regexp.Regexp{
	regexp.MustCompile(`^/v1/(chat/completions|responses|messages)$`),
	regexp.MustCompile(`^/openai/deployments/[A-Za-z0-9._-]+/chat/completions$`),
	regexp.MustCompile(`^/(v1|v1beta|v1alpha)/models/[A-Za-z0-9._-]+:(generateContent|streamGenerateContent)$`),
	regexp.MustCompile(`^/(v1|v1beta1)/projects/[A-Za-z0-9._-]+/locations/[A-Za-z0-9._-]+/publishers/google/models/[A-Za-z0-9._@-]+:(generateContent|streamGenerateContent)$`),
	regexp.MustCompile(`^/(v1|v1beta1)/projects/[A-Za-z0-9._-]+/locations/[A-Za-z0-9._-]+/publishers/anthropic/models/[A-Za-z0-9._@-]+:(rawPredict|streamRawPredict)$`),
	regexp.MustCompile(`^/model/[A-Za-z0-9._:%-]+/(converse|converse-stream|invoke|invoke-with-response-stream)$`),
}

// replayQueryKeys are the query parameters LLM APIs take: Gemini's key and
// alt=sse, Anthropic's beta=true (Claude Code), Azure's api-version.
var replayQueryKeys = map[string]bool{"key": true, "alt": true, "beta": true, "api-version": true}

// anyAuthority in server.replay_authorities forwards every :authority as
// given (the behaviour before round 3's review, U2).
const anyAuthority = "*"

// replayRoute checks a replay's :path and :authority.
type replayRoute struct {
	prefixes []string // path prefixes allowed before a route; "" = none
	// authorities are the :authority values a replay forwards as given
	// (lower-case); "*" forwards any. Empty forwards none: the replay
	// carries replay_url's own authority.
	authorities []string
}

// host returns the Host a replay carries for the :authority a gRPC peer
// gave: that authority when it is listed, "" (replay_url's own authority)
// when nothing is listed, and ok false when others are listed. Whoever
// reaches the gRPC port writes :authority, so by default it never reaches
// the replay listener: there it could pick a virtual host, an internal one
// included, on a listener that does not run toolproc (review round 3, U2).
// An operator whose replay listener routes by Host lists the hosts clients
// use.
func (r replayRoute) host(authority string) (host string, ok bool) {
	if len(r.authorities) == 0 {
		return "", true
	}
	a := strings.ToLower(authority)
	if slices.Contains(r.authorities, anyAuthority) || slices.Contains(r.authorities, a) {
		return authority, true
	}
	return "", false
}

// allows checks a replay's :path and :authority.
func (r replayRoute) allows(path, authority string) bool {
	if _, ok := r.host(authority); !ok {
		return false
	}
	p, q, _ := strings.Cut(path, "?")
	if strings.Contains(p, "#") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
		return false
	}
	if q != "" {
		vals, err := url.ParseQuery(q)
		if err != nil {
			return false
		}
		for k := range vals {
			if !replayQueryKeys[k] {
				return false
			}
		}
	}
	for _, prefix := range r.prefixes {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		for _, re := range llmRoutes {
			if re.MatchString(rest) {
				return true
			}
		}
	}
	return false
}
