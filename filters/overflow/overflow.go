// Package overflow classifies upstream LLM provider error responses: does the
// error say the prompt no longer fits the model's context window, that the
// request body is too big, or that OpenRouter rejected it with its opaque
// "provider limit" shape? Everything else (rate limits, auth, throttling,
// quota, server errors) is NotOurs, so the caller leaves it alone.
//
// The package is pure: bytes in, a Verdict out. No clocks, no network, no
// goroutines, no mutable globals. Reasons are constant strings that name the
// rule that fired; they never contain text from the body.
package overflow

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// Class is the outcome of a classification.
type Class string

const (
	// NotOurs covers rate limits, auth, per-minute "Request too large",
	// throttling, quota, server errors and anything unrecognised.
	NotOurs Class = ""
	// ContextOverflow means the prompt exceeds the model's context window.
	ContextOverflow Class = "context_overflow"
	// PayloadTooLarge means the request body is too big (413 and equivalents).
	PayloadTooLarge Class = "payload_too_large"
	// ProviderLimit is OpenRouter's 400 whose error.metadata.raw is exactly
	// "ERROR" (case-sensitive).
	ProviderLimit Class = "provider_limit"
)

// Provider labels used in Verdict.Provider.
const (
	ProviderOpenAI     = "openai"
	ProviderAnthropic  = "anthropic"
	ProviderGemini     = "gemini"
	ProviderBedrock    = "bedrock"
	ProviderOpenRouter = "openrouter"
	ProviderAzure      = "azure"
	ProviderVertex     = "vertex"
	ProviderUnknown    = "unknown"
)

// Verdict is the result of Classify and ClassifyStreamEvent.
type Verdict struct {
	Class Class
	// Provider is a best-effort label: openai, anthropic, gemini, bedrock,
	// openrouter, azure, vertex or unknown.
	Provider string
	// Reason names the rule that decided (short and content-free). It is
	// empty only when nothing matched at all.
	Reason string
	// Tokens are the counts the error message states, when it states any
	// (zero otherwise).
	Tokens Tokens
}

// Match reports whether the verdict asks for recovery (any class but NotOurs).
func (v Verdict) Match() bool { return v.Class != NotOurs }

// maxField bounds how many bytes of any one string field (or of a non-JSON
// body) are searched, so a huge body costs bounded time.
const maxField = 16 << 10

// maxTextBody bounds the searched prefix of a non-JSON body.
const maxTextBody = 64 << 10

// errInfo is what was extracted from one error body or event.
type errInfo struct {
	isErr    bool     // an error object/marker was found
	codes    []string // lower-cased structured codes/types/statuses
	hay      string   // lower-cased text the message rules search
	raw      string   // error.metadata.raw, verbatim
	rawIsStr bool     // error.metadata.raw exists and is a JSON string
	provider string
}

// Classify decides from the HTTP status, the response headers (lower-case
// keys) and the body (JSON or text).
//
// Precedence: 429 is never a match; then OpenRouter's raw "ERROR" rule (400
// only); then structured codes/types; then rate-limit and other exclusion
// phrases; then overflow and payload message patterns (case-insensitive);
// then the status (413 → PayloadTooLarge). Replies with status < 400 are only
// inspected when the body carries an explicit error object.
func Classify(status int, headers map[string]string, body []byte) Verdict {
	info := extractBody(body, status >= 400)
	if info.provider == ProviderUnknown || info.provider == "" {
		info.provider = providerFromHeaders(headers)
	}
	if info.provider == ProviderUnknown && hasOpenAICode(info.codes) {
		info.provider = ProviderOpenAI
	}
	if et := headerErrorType(headers); et != "" {
		info.codes = append(info.codes, et)
		info.hay = joinHay(info.hay, et)
		if info.provider == ProviderUnknown {
			info.provider = ProviderBedrock
		}
	}
	if status == 429 {
		return Verdict{Class: NotOurs, Provider: info.provider, Reason: "status_429"}
	}
	if status < 400 && !info.isErr {
		return Verdict{Class: NotOurs, Provider: info.provider, Reason: ""}
	}
	if status == 400 && info.rawIsStr && info.raw == "ERROR" {
		return Verdict{Class: ProviderLimit, Provider: ProviderOpenRouter, Reason: "openrouter_raw_error"}
	}
	if v, ok := decide(info); ok {
		return v
	}
	if status == 413 {
		return Verdict{Class: PayloadTooLarge, Provider: info.provider, Reason: "status_413"}
	}
	return Verdict{Class: NotOurs, Provider: info.provider, Reason: ""}
}

// ClassifyStreamEvent decides from the first error event of an HTTP 200 SSE
// stream, before any content was sent: the data JSON of an OpenAI Responses
// `error` or `response.failed` event, an Anthropic `error` event, an OpenAI
// chat chunk carrying an "error" key, or a Bedrock-style `*Exception` event.
// Events that carry no error give NotOurs. The status-based rules (413,
// OpenRouter's 400 raw "ERROR") do not apply inside a stream.
func ClassifyStreamEvent(eventName string, data []byte) Verdict {
	name := strings.ToLower(strings.TrimSpace(eventName))
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return Verdict{Class: NotOurs, Provider: ProviderUnknown, Reason: ""}
	}
	typ := root.Get("type").String()
	var info errInfo
	switch {
	case name == "response.failed" || typ == "response.failed":
		e := root.Get("response.error")
		if !e.IsObject() {
			return Verdict{Class: NotOurs, Provider: ProviderOpenAI, Reason: ""}
		}
		info = fromErrorObject(e)
		info.provider = ProviderOpenAI
	case name == "error" || typ == "error":
		info = extractRoot(root, true)
		if root.Get("sequence_number").Exists() || info.provider == ProviderUnknown {
			info.provider = ProviderOpenAI // Responses events carry sequence_number
		}
	case strings.HasSuffix(name, "exception"):
		info = extractRoot(root, true)
		info.codes = append(info.codes, name)
		info.hay = joinHay(info.hay, name)
		info.provider = ProviderBedrock
	default:
		e := root.Get("error")
		if !e.Exists() || e.Type == gjson.Null {
			return Verdict{Class: NotOurs, Provider: ProviderUnknown, Reason: ""}
		}
		info = extractRoot(root, false)
		if info.provider == ProviderUnknown {
			info.provider = ProviderOpenAI
		}
	}
	info.isErr = true
	if v, ok := decide(info); ok {
		return v
	}
	return Verdict{Class: NotOurs, Provider: info.provider, Reason: ""}
}

// decide applies the structured-code, exclusion and message rules shared by
// Classify and ClassifyStreamEvent.
func decide(info errInfo) (Verdict, bool) {
	p := info.provider
	if p == "" {
		p = ProviderUnknown
	}
	// 1. Structured codes.
	for _, c := range info.codes {
		if r, ok := notOursCodes[c]; ok {
			return Verdict{Class: NotOurs, Provider: p, Reason: r}, true
		}
	}
	for _, c := range info.codes {
		if cl, ok := matchCodes[c]; ok {
			return Verdict{Class: cl, Provider: p, Reason: "code:" + c, Tokens: parseTokens(info.hay)}, true
		}
	}
	hay := info.hay
	if hay == "" {
		return Verdict{}, false
	}
	// 2. Exclusions: rate limit, TPM, throttling, quota, billing, reasoning.
	for _, r := range exclusions {
		if r.match(hay) {
			return Verdict{Class: NotOurs, Provider: p, Reason: r.reason}, true
		}
	}
	// 3. Message patterns.
	for _, r := range rules {
		if r.gate != "" && !strings.Contains(hay, r.gate) && p != r.gateProvider {
			continue
		}
		if r.match(hay) {
			if r.provider != "" && p == ProviderUnknown {
				p = r.provider
			}
			if r.provider == ProviderVertex {
				p = ProviderVertex
			}
			return Verdict{Class: r.class, Provider: p, Reason: r.reason, Tokens: parseTokens(hay)}, true
		}
	}
	return Verdict{}, false
}

// extractBody parses an HTTP error body. allowText says whether a non-JSON
// body (or JSON without recognisable error fields) is searched as text.
func extractBody(body []byte, allowText bool) errInfo {
	trim := trimSpaceBytes(body)
	if len(trim) > 0 && (trim[0] == '{' || trim[0] == '[') && jsonsafe.Valid(trim) {
		root := gjson.ParseBytes(trim)
		if root.IsArray() { // Gemini streaming endpoint wraps errors in an array.
			root = root.Get("0")
		}
		if root.IsObject() {
			info := extractRoot(root, allowText)
			if info.hay == "" && len(info.codes) == 0 && allowText {
				info.hay = lowerCap(string(trim), maxTextBody)
			}
			return info
		}
	}
	info := errInfo{provider: ProviderUnknown}
	if allowText && len(trim) > 0 {
		info.hay = lowerCap(string(trim), maxTextBody)
	}
	return info
}

// extractRoot reads an error from a top-level JSON object: either an "error"
// member (object or string) or error fields at the top level (OpenAI
// Responses stream error, vLLM, Bedrock). topLevel allows the latter.
func extractRoot(root gjson.Result, topLevel bool) errInfo {
	e := root.Get("error")
	var info errInfo
	switch {
	case e.IsObject():
		info = fromErrorObject(e)
		if root.Get("type").String() == "error" && e.Get("type").Exists() && !root.Get("sequence_number").Exists() {
			info.provider = ProviderAnthropic
		}
	case e.Type == gjson.String:
		info = errInfo{isErr: true, provider: ProviderUnknown}
		info.hay = lowerCap(e.String(), maxField)
		if c := root.Get("code"); c.Type == gjson.String {
			info.codes = append(info.codes, strings.ToLower(c.String()))
		}
	case topLevel:
		info = fromErrorObject(root)
		info.isErr = info.hay != "" || len(info.codes) > 0
		if info.provider == ProviderOpenRouter && !root.Get("metadata").Exists() {
			info.provider = ProviderUnknown // bare numeric code (vLLM), not OpenRouter
		}
		if t := root.Get("__type"); t.Type == gjson.String {
			info.provider = ProviderBedrock
		} else if root.Get("Message").Exists() && !root.Get("message").Exists() {
			info.provider = ProviderBedrock
		}
	default:
		info = errInfo{provider: ProviderUnknown}
	}
	// Top-level Bedrock-style fields next to nothing else.
	if t := root.Get("__type"); t.Type == gjson.String && !e.Exists() {
		if c := lastColonPart(strings.ToLower(t.String())); c != "" {
			info.codes = append(info.codes, c)
			info.hay = joinHay(info.hay, c)
		}
	}
	return info
}

// fromErrorObject collects codes and message text from one error object.
func fromErrorObject(e gjson.Result) errInfo {
	info := errInfo{isErr: true, provider: ProviderUnknown}
	var hay []string
	numericCode := false
	for _, k := range [...]string{"code", "type", "status"} {
		v := e.Get(k)
		if v.Type == gjson.String && v.Str != "" && v.Str != "error" {
			c := strings.ToLower(v.Str)
			info.codes = append(info.codes, c)
			hay = append(hay, lowerCap(c, maxField))
		} else if k == "code" && v.Type == gjson.Number {
			numericCode = true
		}
	}
	for _, k := range [...]string{"message", "Message", "msg", "detail"} {
		if v := e.Get(k); v.Type == gjson.String && v.Str != "" {
			hay = append(hay, lowerCap(v.Str, maxField))
		}
	}
	if m := e.Get("metadata"); m.IsObject() {
		info.provider = ProviderOpenRouter
		if r := m.Get("raw"); r.Exists() {
			if r.Type == gjson.String {
				info.raw = r.Str
				info.rawIsStr = true
				hay = append(hay, lowerCap(r.Str, maxField))
			} else {
				hay = append(hay, lowerCap(r.Raw, maxField))
			}
		}
	} else if st := e.Get("status"); st.Type == gjson.String && numericCode && isUpperIdent(st.Str) {
		info.provider = ProviderGemini
	} else if numericCode && !e.Get("type").Exists() && !e.Get("status").Exists() {
		// OpenRouter's shape: {"code":400,"message":…}; llama.cpp adds "type".
		info.provider = ProviderOpenRouter
	}
	info.hay = strings.Join(hay, "\n")
	return info
}

// providerFromHeaders guesses the provider from response headers.
func providerFromHeaders(h map[string]string) string {
	if len(h) == 0 {
		return ProviderUnknown
	}
	has := func(k string) bool { _, ok := h[k]; return ok }
	switch {
	case has("x-amzn-errortype") || has("x-amzn-requestid") || has("x-amzn-bedrock-invocation-latency"):
		return ProviderBedrock
	case has("apim-request-id") || has("x-ms-region") || has("azureml-model-session") || has("x-ms-client-request-id"):
		return ProviderAzure
	case has("anthropic-organization-id") || has("anthropic-ratelimit-requests-limit") || has("x-should-retry") && has("request-id"):
		return ProviderAnthropic
	case has("openai-organization") || has("openai-processing-ms") || has("openai-version"):
		return ProviderOpenAI
	case has("x-generation-id") || strings.Contains(strings.ToLower(h["server"]), "openrouter"):
		return ProviderOpenRouter
	case strings.Contains(strings.ToLower(h["server"]), "esf") || has("x-goog-request-id"):
		return ProviderGemini
	}
	return ProviderUnknown
}

// headerErrorType returns the lower-cased Bedrock x-amzn-errortype (the part
// before any ':'), or "".
func headerErrorType(h map[string]string) string {
	v := h["x-amzn-errortype"]
	if v == "" {
		return ""
	}
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v))
}

func lastColonPart(s string) string {
	// "com.amazon.coral.validate#ValidationException" and
	// "ValidationException:http://..." both reduce to the exception name.
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func joinHay(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

func lowerCap(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToLower(s)
}

func isUpperIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return true
}

func trimSpaceBytes(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// hasOpenAICode reports an OpenAI-style string code or type.
func hasOpenAICode(codes []string) bool {
	for _, c := range codes {
		switch c {
		case "invalid_request_error", "context_length_exceeded", "rate_limit_exceeded", "insufficient_quota", "tokens":
			return true
		}
	}
	return false
}
