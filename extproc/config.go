package extproc

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/shape"
	"github.com/toolproc/toolproc/filters/wire"
)

//go:embed default_config.yaml
var defaultConfigYAML []byte

// DefaultProfile is used when a request names no profile.
const DefaultProfile = "default"

// Config is toolproc's whole configuration, validated once at load.
type Config struct {
	Server   ServerConfig        `json:"server"`
	Log      LogConfig           `json:"log"`
	Store    StoreConfig         `json:"store"`
	Audit    AuditConfig         `json:"audit"`
	Tracing  TracingConfig       `json:"tracing"`
	Profiles map[string]*Profile `json:"profiles"`
}

// StoreConfig selects where originals and compressed results are kept.
type StoreConfig struct {
	// Type is memory (one process) or redis (shared by replicas).
	Type          string   `json:"type" enum:"memory,redis"`
	OriginalTTL   Duration `json:"original_ttl"`
	CompressedTTL Duration `json:"compressed_ttl"`
	MaxBytes      int64    `json:"max_bytes"`
	// TenantMaxBytes caps one tenant's share of the memory store: a tenant
	// over it evicts its own oldest entries, never another tenant's.
	TenantMaxBytes int64 `json:"tenant_max_bytes"`
	// UnverifiedTenantMaxBytes is the share of a tenant no answer for has
	// come back 2xx yet (a made-up key is a tenant too); such tenants are
	// evicted first and together hold at most a quarter of max_bytes. In
	// Redis it caps what an unverified tenant may write.
	UnverifiedTenantMaxBytes int64       `json:"unverified_tenant_max_bytes"`
	Redis                    RedisConfig `json:"redis"`
	// TenantHeader, when set, names the request header that identifies the
	// caller instead of the credential headers. It must be one the gateway
	// sets (and strips from clients); callers without a credential get
	// references only through it.
	TenantHeader string `json:"tenant_header"`
	// SecretEnv names the environment variable holding the deployment
	// secret that keys tenants and shadow ids. Empty: the Redis store keeps
	// a generated one (every replica reads the same), the memory store
	// makes one per process.
	SecretEnv string `json:"secret_env"`
	// KeylessReferences: callers without a credential (or with a
	// placeholder one) get references under a tenant derived from their
	// conversation (shadow.Keyring.ConversationTenant). Off, they get
	// none: their results are clamped, and the tiers summarise old ones
	// only when the window forces it, marked as irrecoverable.
	KeylessReferences bool `json:"keyless_references"`
	// Cooldown: after a store error, requests skip the store for this long.
	Cooldown Duration `json:"cooldown"`
}

// RedisConfig is the shared store's connection.
type RedisConfig struct {
	// Mode is single, cluster, sentinel, or auto (sentinel when
	// master_name is set, cluster when addrs lists several nodes, else
	// single).
	Mode string `json:"mode"`
	Addr string `json:"addr"`
	// Addrs are the seed nodes of a Redis Cluster or the Sentinels.
	Addrs []string `json:"addrs"`
	// MasterName is the Sentinel master set's name.
	MasterName string `json:"master_name"`
	// SentinelPasswordEnv names the variable holding the Sentinels'
	// password, when they have one.
	SentinelPasswordEnv string `json:"sentinel_password_env"`
	Username            string `json:"username"`
	// PasswordEnv names the environment variable holding the password, so
	// the secret stays out of the config file.
	PasswordEnv string   `json:"password_env"`
	DB          int      `json:"db"`
	KeyPrefix   string   `json:"key_prefix"`
	TLS         bool     `json:"tls"`
	Timeout     Duration `json:"timeout"`
}

// AuditConfig is the optional JSONL log of compression decisions and of
// each processed exchange's bill.
type AuditConfig struct {
	// Path of the JSONL file; "" disables it, "-" writes to stderr.
	Path string `json:"path"`
}

// ServerConfig holds listener settings.
type ServerConfig struct {
	GRPCAddr        string `json:"grpc_addr"`
	AdminAddr       string `json:"admin_addr"`
	MaxRecvMsgBytes int    `json:"max_recv_msg_bytes"`
	// HeapHeadroomBytes is what the collector may let the heap grow past
	// what is live before collecting (GOGC set to headroom/live after each
	// collection, at most 100); -1 leaves GOGC alone. GOGC in the
	// environment wins.
	HeapHeadroomBytes int64    `json:"heap_headroom_bytes"`
	ShutdownGrace     Duration `json:"shutdown_grace"`
	// ReplayURL is Envoy's replay listener: same routes, ext_proc disabled.
	// Requests toolproc must send itself go there, never to a provider.
	// MaxResponseHoldBytes caps an upstream answer held whole for a
	// rewrite (STREAMED and FULL_DUPLEX_STREAMED); past it the answer
	// passes through unchanged, counted as body_too_large.
	MaxResponseHoldBytes int      `json:"max_response_hold_bytes"`
	ReplayURL            string   `json:"replay_url"`
	ReplayTimeout        Duration `json:"replay_timeout"`
	// ReplayPathPrefixes are the path prefixes a replayed LLM route may
	// carry ("" = the provider's own paths; "/api" = OpenRouter's). A
	// replay to any other path is refused: the gRPC port is a trust
	// boundary (README "Security").
	ReplayPathPrefixes []string `json:"replay_path_prefixes"`
	// ReplayAuthorities are the :authority values a replay forwards as the
	// client sent them (lower-case; "*" = any). Empty, the default, forwards
	// none: replays carry replay_url's authority, so a gRPC peer cannot pick
	// the replay listener's virtual host. When set, a replay to an
	// authority not listed is refused.
	ReplayAuthorities []string `json:"replay_authorities"`
	// MaxMessageTimeout mirrors the ext_proc filter's max_message_timeout:
	// before a replay outside FULL_DUPLEX_STREAMED toolproc asks Envoy to
	// extend the message timer to this (Envoy ignores larger values).
	MaxMessageTimeout Duration `json:"max_message_timeout"`
	// MemoryLimitBytes is the Go runtime's soft memory limit: 0 derives it
	// (MemoryLimit), -1 sets none.
	MemoryLimitBytes int64 `json:"memory_limit_bytes"`
	// ClientBypass honours x-toolproc-bypass: 1 on a request: the exchange
	// passes both ways untouched (counted). Turning it off can only make
	// toolproc do more, never less, than the profile says.
	ClientBypass bool `json:"client_bypass"`
	// UsageMaxObjectBytes caps the copy of one usage object the usage
	// reader makes while an answer passes (filters/usage); a larger one is
	// not read, counted as usage_answers_total{outcome="too_large"}.
	UsageMaxObjectBytes int `json:"usage_max_object_bytes"`
}

// memoryHeadroom is what the derived memory limit allows above the memory
// store's cap: bodies in flight (a 1 MB request is held as received and as
// rewritten), the compression engine's working set, gRPC buffers.
const memoryHeadroom = 192 << 20

// MemoryLimit is the soft limit the server sets, 0 for none. Without one,
// the Go collector lets the heap grow to twice what is live: a full 256 MiB
// memory store and a stream of new bodies took the process to 615 MB
// (issue 14). With the limit the collector runs earlier as the heap nears
// it; it is soft, so a burst above it slows collection work rather than
// failing.
func (c *Config) MemoryLimit() int64 {
	switch {
	case c.Server.MemoryLimitBytes > 0:
		return c.Server.MemoryLimitBytes
	case c.Server.MemoryLimitBytes < 0:
		return 0
	}
	limit := int64(memoryHeadroom) + int64(c.Server.MaxRecvMsgBytes)
	if c.Store.Type == "memory" {
		limit += c.Store.MaxBytes
	}
	return limit
}

// LogConfig selects the slog handler.
type LogConfig struct {
	Level  string `json:"level" enum:"debug,info,warn,error"`
	Format string `json:"format" enum:"json,text"`
}

// Profile is one named set of filter settings, chosen per request.
type Profile struct {
	Enabled     bool            `json:"enabled"`
	FailureMode string          `json:"failure_mode" enum:"open,closed"`
	Dialects    []string        `json:"dialects" enum:"openai_chat,openai_responses,anthropic,gemini,bedrock"`
	Clamp       ClampProfile    `json:"clamp"`
	Compress    CompressProfile `json:"compress"`
	Expand      ExpandProfile   `json:"expand"`
	Tiers       TiersProfile    `json:"tiers"`
	Recovery    RecoveryProfile `json:"recovery"`
	Stream      StreamProfile   `json:"stream"`
	Shape       ShapeProfile    `json:"shape"`
	// SigV4 says what to do with AWS SigV4-signed requests (Bedrock):
	// skip (default) leaves them untouched, since the signature covers the
	// body; rewrite is for deployments where Envoy's aws_request_signing
	// filter runs after ext_proc and signs the rewritten body.
	SigV4 string `json:"sigv4" enum:"skip,rewrite"`
}

// SigV4 settings.
const (
	SigV4Skip    = "skip"
	SigV4Rewrite = "rewrite"
)

// RecoveryProfile configures overflow recovery: when the provider says the
// request is too large, rewrite it harder and replay it.
type RecoveryProfile struct {
	Enabled bool `json:"enabled"`
	// Rungs in order, each used at most once per request: tiers (every
	// tool result but the latest tiers_keep_recent summarised, as the tiers
	// do, down to their target), clamp (every result to the model's share
	// of its window), compress (structural with shadow references),
	// truncate (llxprt's 512 characters, original kept).
	Rungs []string `json:"rungs" enum:"max_tokens,tiers,clamp,compress,truncate"`
	// TiersKeepRecent is how many of the latest results the tiers rung
	// leaves whole (the tiers' own keep_recent applies otherwise).
	TiersKeepRecent int `json:"tiers_keep_recent"`
	// ProviderLimitRungs answer OpenRouter's opaque 400 (metadata.raw
	// "ERROR"), which says nothing about size: llxprt's fix for it was the
	// 512-character cut (seed 000), so that rung goes first.
	ProviderLimitRungs []string `json:"provider_limit_rungs" enum:"tiers,clamp,compress,truncate"`
	MaxReplays         int      `json:"max_replays"`
	// ContextShare is seed 001's share of the context window one tool
	// result (and, at this rung, all of them together) may take.
	ContextShare  float64 `json:"context_share"`
	TruncateChars int     `json:"truncate_chars"`
	// Windows adds or overrides model-prefix → context-window (tokens)
	// entries of the built-in table; DefaultWindow is used for unknown models.
	Windows       map[string]int `json:"windows"`
	DefaultWindow int            `json:"default_window"`
	// MaxErrorBytes bounds how much of an error answer is held to classify it.
	MaxErrorBytes int `json:"max_error_bytes"`
	// MinOutputTokens is the floor of the max_tokens rung: it never lowers
	// the requested output below this many tokens.
	MinOutputTokens int `json:"min_output_tokens"`
	// FallbackModels maps a model (prefix, longest wins) to a model with a
	// larger window on the same route, replayed after every rung failed.
	// Empty: no fallback.
	FallbackModels map[string]string `json:"fallback_models"`
	// CanonicalErrors answers an overflow that recovery could not fix (or
	// did not try) in the client's dialect's canonical overflow form, so
	// the client's own recovery (compaction) starts.
	CanonicalErrors bool `json:"canonical_errors"`
}

// CompressProfile configures compression with shadow references.
type CompressProfile struct {
	Enabled bool `json:"enabled"`
	// Strategy and FallbackStrategy: structural, simple, llm or passthrough.
	Strategy         string `json:"strategy" enum:"structural,simple,llm,passthrough"`
	FallbackStrategy string `json:"fallback_strategy" enum:"structural,simple,llm,passthrough"`
	MinBytes         int    `json:"min_bytes"`
	MaxBytes         int    `json:"max_bytes"`
	TargetBytes      int    `json:"target_bytes"`
	// TargetRatio (0 = off) aims each result at its size divided by it
	// ("every result at 4x"); with target_bytes the smaller aim wins.
	TargetRatio float64   `json:"target_ratio"`
	SkipTools   []string  `json:"skip_tools"`
	SimpleWords int       `json:"simple_words"`
	LLM         LLMConfig `json:"llm"`
}

// LLMConfig is the llm strategy: a model reached through the replay listener.
type LLMConfig struct {
	// Dialect of the summariser's API: openai_chat or anthropic; Path is
	// the route on the replay listener.
	Dialect       string   `json:"dialect" enum:"openai_chat,anthropic"`
	Path          string   `json:"path"`
	Model         string   `json:"model"`
	Prompt        string   `json:"prompt"`
	Timeout       Duration `json:"timeout"`
	MaxConcurrent int      `json:"max_concurrent"`
	Rate          float64  `json:"rate"`
	// ForwardCredentials sends the caller's credential headers with the
	// summarisation request, and only when the caller speaks the
	// summariser's dialect (its credential is for that provider); off,
	// Envoy's replay route must add them.
	ForwardCredentials bool `json:"forward_credentials"`
	// CredentialHeaders, when set, are forwarded whatever the caller's
	// dialect: the operator says these headers are good for the
	// summariser's route.
	CredentialHeaders []string `json:"credential_headers"`
	// RequestBudget bounds all summaries of one request together (at most
	// half of server.max_message_timeout): results not summarised by then
	// take the fallback strategy.
	RequestBudget Duration `json:"request_budget"`
}

// ExpandProfile configures the expand_context tool.
type ExpandProfile struct {
	// MaxLoops bounds the continuations one answer may cause.
	MaxLoops int `json:"max_loops"`
	// ContextShare is the share of the model's context window the
	// originals of one turn's expansions may take; longer ones are cut to
	// fit, head and tail kept, and say so.
	ContextShare float64 `json:"context_share"`
}

// TiersProfile configures tool-history tiers: once a request nears the
// model's context window, old tool exchanges become one-line summaries
// (originals kept for expand_context), the recent ones stay byte-identical.
type TiersProfile struct {
	Enabled bool `json:"enabled"`
	// KeepRecent tool results always stay as they are.
	KeepRecent int `json:"keep_recent"`
	// TriggerShare and TargetShare of the model's window (recovery.windows
	// and the built-in table; WindowTokens overrides both when set): above
	// the trigger the request is cut down to the target. TriggerTokens and
	// TargetTokens replace the shares with absolute figures.
	TriggerShare  float64 `json:"trigger_share"`
	TargetShare   float64 `json:"target_share"`
	TriggerTokens int     `json:"trigger_tokens"`
	TargetTokens  int     `json:"target_tokens"`
	WindowTokens  int     `json:"window_tokens"`
	// InputMinBytes: longer string arguments of old calls (file bodies,
	// patches) are summarised too; -1 leaves call arguments alone.
	InputMinBytes int `json:"input_min_bytes"`
	// MiddleRatio: when the recent results alone would keep a request over
	// the window, the older of them are compressed at this ratio (the
	// structural engine, references kept) instead of summarised; 0 turns
	// the middle tier off.
	MiddleRatio float64 `json:"middle_ratio"`
	// CostModel prices a step outside the window's emergency: auto (the
	// dialect's provider family), anthropic, openai, gemini or none (no
	// prompt cache: every removed byte pays).
	CostModel string `json:"cost_model" enum:"auto,anthropic,openai,gemini,none"`
	// Flatten renders tool exchanges as plain text messages instead of
	// calls and results, for gateways that reject structured tool history:
	// "off" (default), "old" (the summarised ones; recent exchanges stay
	// structured), "all" (every exchange, whatever the budget).
	Flatten string `json:"flatten" enum:",off,old,all"`
}

// StreamProfile configures response repair.
type StreamProfile struct {
	// Normalize repairs answers so clients can assemble tool calls: indexed,
	// well-formed deltas, finish reasons, terminators, JSON→SSE when the
	// client asked for a stream.
	Normalize bool `json:"normalize"`
	// XMLToolCalls turns <invoke> blocks in assistant text into tool calls.
	XMLToolCalls bool `json:"xml_tool_calls"`
}

// ShapeProfile reshapes requests for upstreams with fewer features.
type ShapeProfile struct {
	// Mode: off (default), or text_only for an upstream that reads and
	// writes only text (OpenAI Chat and Anthropic Messages requests): system messages, tools, tool calls and results
	// are rendered into the conversation (filters/shape), and answers'
	// <invoke> blocks become tool calls (needs stream.normalize and
	// stream.xml_tool_calls).
	Mode string `json:"mode" enum:",off,text_only"`
	// InjectSystem: always (default; a stateless upstream needs the system
	// text on every request) or new_conversations (seed 002's rule, for an
	// upstream that keeps the conversation).
	InjectSystem string `json:"inject_system" enum:",always,new_conversations"`
}

// Shape modes.
const (
	ShapeOff      = "off"
	ShapeTextOnly = "text_only"
)

// TextOnly reports whether requests are rendered for a text-only upstream.
func (s ShapeProfile) TextOnly() bool { return s.Mode == ShapeTextOnly }

// ClampProfile configures the hard clamp.
type ClampProfile struct {
	Enabled  bool   `json:"enabled"`
	MaxBytes int    `json:"max_bytes"`
	MaxLines int    `json:"max_lines"`
	Keep     string `json:"keep" enum:",head,tail,head_tail"`
	// KeepReads is Keep for the results of file reads (Read, read_file,
	// the text editor's view, cat/head/sed of one file): head_tail by
	// default, because what follows the head of a source file is what the
	// agent reads it for as often as the head.
	KeepReads string `json:"keep_reads" enum:",head,tail,head_tail"`
	// Structural cuts a result the clamp must cut, when the compression
	// strategies can tell what it is (a test log, a traceback, a diff,
	// search hits, JSON, ...), by what it reports instead of by position,
	// with every removal marked in-band. File reads keep keep_reads.
	Structural bool `json:"structural"`
}

// FailClosed reports whether requests toolproc cannot process are refused.
func (p *Profile) FailClosed() bool { return p.FailureMode == "closed" }

// Handles reports whether the profile rewrites dialect d.
func (p *Profile) Handles(d wire.Dialect) bool {
	return p.Enabled && slices.Contains(p.Dialects, string(d))
}

// ClampLimits converts the YAML settings to the clamp's limits.
func (c ClampProfile) ClampLimits() clamp.Limits {
	return clamp.Limits{MaxBytes: c.MaxBytes, MaxLines: c.MaxLines, Keep: clamp.Keep(c.Keep)}
}

// offWords turns YAML 1.1's boolean reading of the word "off" back into
// the word, for the settings whose documented values include it
// (tiers.flatten, shape.mode): `flatten: off` arrives as false.
func offWords(base map[string]any) {
	profiles, _ := base["profiles"].(map[string]any)
	for _, p := range profiles {
		pm, _ := p.(map[string]any)
		for section, key := range map[string]string{"tiers": "flatten", "shape": "mode"} {
			if m, ok := pm[section].(map[string]any); ok {
				if b, isBool := m[key].(bool); isBool && !b {
					m[key] = "off"
				}
			}
		}
	}
}

// Duration reads "15s"-style strings from YAML.
type Duration time.Duration

// UnmarshalJSON accepts a Go duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration: want a string like \"15s\" or a number of seconds, got %s", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// MarshalJSON writes the Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// DefaultConfig returns the embedded defaults.
func DefaultConfig() *Config {
	cfg, err := ParseConfig(nil)
	if err != nil {
		panic("embedded default config is invalid: " + err.Error())
	}
	return cfg
}

// LoadConfig reads path (if not empty) over the embedded defaults.
func LoadConfig(path string) (*Config, error) {
	if path == "" {
		return ParseConfig(nil)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		var ces *ConfigErrors
		if errors.As(err, &ces) {
			ces.File = path
			return nil, ces
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig merges user YAML over the embedded defaults. Every profile
// inherits from the final "default" profile, so a profile only names what it
// changes. Unknown keys are errors: a typo must not silently do nothing.
func ParseConfig(user []byte) (*Config, error) {
	base, err := yamlToMap(defaultConfigYAML)
	if err != nil {
		return nil, err
	}
	var written map[string]position
	if len(strings.TrimSpace(string(user))) > 0 {
		// Keys, types and positions first, on the user's own file
		// (config_errors.go): what the typed decode below would report is
		// said there in YAML's terms, with line and column.
		if written, err = checkConfigYAML(user); err != nil {
			return nil, err
		}
		over, err := yamlToMap(user)
		if err != nil {
			return nil, err
		}
		base = merge(base, over)
	}
	offWords(base)
	// Expand profile inheritance before the typed decode.
	if profiles, ok := base["profiles"].(map[string]any); ok {
		def, _ := profiles[DefaultProfile].(map[string]any)
		for name, p := range profiles {
			pm, ok := p.(map[string]any)
			if p != nil && !ok {
				return nil, fmt.Errorf("profiles.%s: must be a mapping", name)
			}
			if name != DefaultProfile {
				profiles[name] = merge(clone(def), pm)
			}
		}
	}
	merged, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	var cfg Config
	if err := yaml.UnmarshalStrict(merged, &cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, placeErrors(err, written)
	}
	return &cfg, nil
}

// placeErrors gives Validate's problems the line and column where the user
// wrote the key, and drops a problem a profile only inherited from
// default: it is reported once, on default, where it was written (the
// built-in xml profile would otherwise repeat every mistake in default).
func placeErrors(err error, written map[string]position) error {
	var ces *ConfigErrors
	if !errors.As(err, &ces) {
		return err
	}
	onDefault := map[string]bool{}
	for _, ce := range ces.List {
		if rest, ok := strings.CutPrefix(ce.Key, "profiles."+DefaultProfile+"."); ok {
			onDefault[rest+"\x00"+ce.Msg] = true
		}
	}
	var out ConfigErrors
	for _, ce := range ces.List {
		if p, ok := written[ce.Key]; ok {
			ce.Line, ce.Column = p.line, p.column
		}
		if name, rest, ok := profileKey(ce.Key); ok && name != DefaultProfile &&
			onDefault[rest+"\x00"+ce.Msg] && !wroteUnder(written, ce.Key) {
			continue
		}
		out.List = append(out.List, ce)
	}
	out.sort()
	return &out
}

// profileKey splits profiles.NAME.REST.
func profileKey(key string) (name, rest string, ok bool) {
	after, ok := strings.CutPrefix(key, "profiles.")
	if !ok {
		return "", "", false
	}
	name, rest, ok = strings.Cut(after, ".")
	return name, rest, ok
}

// wroteUnder reports whether the user wrote key or a key inside it.
func wroteUnder(written map[string]position, key string) bool {
	for k := range written {
		if k == key || strings.HasPrefix(k, key+".") || strings.HasPrefix(k, key+"[") {
			return true
		}
	}
	return false
}

// Validate checks every key once, naming the key and the allowed values.
func (c *Config) Validate() error {
	var errs ConfigErrors
	bad := func(key, format string, args ...any) {
		errs.List = append(errs.List, &ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	c.Tracing.validate(bad)
	if c.Server.GRPCAddr == "" {
		bad("server.grpc_addr", "must not be empty")
	}
	if c.Server.AdminAddr == "" {
		bad("server.admin_addr", "must not be empty")
	}
	if c.Server.MaxRecvMsgBytes < 4<<20 {
		bad("server.max_recv_msg_bytes", "must be at least 4194304 (gRPC's own default), got %d", c.Server.MaxRecvMsgBytes)
	}
	if c.Server.UsageMaxObjectBytes < 256 || c.Server.UsageMaxObjectBytes > 1<<20 {
		bad("server.usage_max_object_bytes", "must be between 256 and 1048576, got %d", c.Server.UsageMaxObjectBytes)
	}
	if c.Server.MaxResponseHoldBytes < 1<<20 {
		bad("server.max_response_hold_bytes", "must be at least 1048576, got %d", c.Server.MaxResponseHoldBytes)
	}
	if c.Server.ShutdownGrace < 0 {
		bad("server.shutdown_grace", "must not be negative")
	}
	if u, err := url.Parse(c.Server.ReplayURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("server.replay_url", "must be an http(s) URL of Envoy's replay listener, got %q", c.Server.ReplayURL)
	}
	if c.Server.MemoryLimitBytes < -1 || c.Server.MemoryLimitBytes > 0 && c.Server.MemoryLimitBytes < 64<<20 {
		bad("server.memory_limit_bytes", "must be -1 (none), 0 (derived) or at least 67108864, got %d", c.Server.MemoryLimitBytes)
	}
	if c.Server.MaxMessageTimeout < 0 || time.Duration(c.Server.MaxMessageTimeout) > time.Hour {
		bad("server.max_message_timeout", "must be between 0 (never extend) and 1h, the proto's cap")
	}
	if c.Server.ReplayTimeout <= 0 {
		bad("server.replay_timeout", "must be positive")
	}
	for _, a := range c.Server.ReplayAuthorities {
		if a == "" || a != strings.ToLower(a) || strings.ContainsAny(a, "/?#@ \t") || a == anyAuthority && len(c.Server.ReplayAuthorities) > 1 {
			bad("server.replay_authorities", "%q must be a lower-case host[:port], or \"*\" alone", a)
		}
	}
	for _, p := range c.Server.ReplayPathPrefixes {
		if p != "" && (!strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "?#")) {
			bad("server.replay_path_prefixes", "%q must be empty or start with / and not end with /", p)
		}
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		bad("log.level", "must be one of debug, info, warn, error; got %q", c.Log.Level)
	}
	if !slices.Contains([]string{"json", "text"}, c.Log.Format) {
		bad("log.format", "must be json or text; got %q", c.Log.Format)
	}
	switch c.Store.Type {
	case "memory":
	case "redis":
		if c.Store.Redis.Addr == "" && len(c.Store.Redis.Addrs) == 0 {
			bad("store.redis.addr", "store.redis.addr or addrs must be set for store.type redis")
		}
	default:
		bad("store.type", "must be memory or redis; got %q", c.Store.Type)
	}
	if c.Store.OriginalTTL <= 0 || c.Store.CompressedTTL <= 0 {
		bad("store", "original_ttl and compressed_ttl must be positive")
	}
	if c.Store.MaxBytes < 1<<20 {
		bad("store.max_bytes", "must be at least 1048576, got %d", c.Store.MaxBytes)
	}
	if c.Store.TenantMaxBytes < 1<<20 || c.Store.TenantMaxBytes > c.Store.MaxBytes {
		bad("store.tenant_max_bytes", "must be between 1048576 and store.max_bytes (%d), got %d", c.Store.MaxBytes, c.Store.TenantMaxBytes)
	}
	if c.Store.UnverifiedTenantMaxBytes < 0 || c.Store.UnverifiedTenantMaxBytes > c.Store.TenantMaxBytes {
		bad("store.unverified_tenant_max_bytes", "must be between 0 and store.tenant_max_bytes (%d), got %d", c.Store.TenantMaxBytes, c.Store.UnverifiedTenantMaxBytes)
	}
	switch c.Store.Redis.Mode {
	case "", "auto", "single", "cluster", "sentinel":
	default:
		bad("store.redis.mode", "must be auto, single, cluster or sentinel, got %q", c.Store.Redis.Mode)
	}
	if c.Store.Redis.Mode == "sentinel" && c.Store.Redis.MasterName == "" {
		bad("store.redis.master_name", "must be set in sentinel mode")
	}
	if c.Store.Cooldown < 0 || c.Store.Redis.Timeout < 0 {
		bad("store", "cooldown and redis.timeout must not be negative")
	}
	if _, ok := c.Profiles[DefaultProfile]; !ok {
		bad("profiles", "must define a %q profile", DefaultProfile)
	}
	for _, name := range c.ProfileNames() {
		p := c.Profiles[name]
		key := "profiles." + name
		if p == nil {
			bad(key, "must be a mapping")
			continue
		}
		if p.FailureMode != "open" && p.FailureMode != "closed" {
			bad(key+".failure_mode", "must be open or closed; got %q", p.FailureMode)
		}
		if p.SigV4 != SigV4Skip && p.SigV4 != SigV4Rewrite {
			bad(key+".sigv4", "must be skip or rewrite; got %q", p.SigV4)
		}
		for _, d := range p.Dialects {
			if !wire.Dialect(d).Valid() {
				bad(key+".dialects", "unknown dialect %q; allowed: %s", d, dialectNames())
			}
		}
		switch p.Shape.Mode {
		case "", ShapeOff:
		case ShapeTextOnly:
			for _, d := range p.Dialects {
				if d != string(wire.OpenAIChat) && d != string(wire.Anthropic) {
					bad(key+".shape.mode", "text_only renders OpenAI Chat and Anthropic Messages requests: set dialects to openai_chat, anthropic or both (not %s)", d)
				}
			}
			if !p.Stream.Normalize || !p.Stream.XMLToolCalls {
				bad(key+".shape.mode", "text_only needs stream.normalize and stream.xml_tool_calls, which turn the answers' <invoke> blocks into tool calls")
			}
		default:
			bad(key+".shape.mode", "must be off or text_only; got %q", p.Shape.Mode)
		}
		switch p.Shape.InjectSystem {
		case "", string(shape.InjectAlways), string(shape.InjectNewConversations):
		default:
			bad(key+".shape.inject_system", "must be always or new_conversations; got %q", p.Shape.InjectSystem)
		}
		switch clamp.Keep(p.Clamp.KeepReads) {
		case "", clamp.KeepHead, clamp.KeepTail, clamp.KeepHeadTail:
		default:
			bad(key+".clamp.keep_reads", "must be head, tail or head_tail (empty: as keep); got %q", p.Clamp.KeepReads)
		}
		// clamp.Limits.Validate's rules, said per key.
		if p.Clamp.MaxBytes < clamp.MinMaxBytes {
			bad(key+".clamp.max_bytes", "must be at least %d (default %d), got %d", clamp.MinMaxBytes, clamp.DefaultMaxBytes, p.Clamp.MaxBytes)
		}
		if p.Clamp.MaxLines < clamp.MinMaxLines {
			bad(key+".clamp.max_lines", "must be at least %d (default %d), got %d", clamp.MinMaxLines, clamp.DefaultMaxLines, p.Clamp.MaxLines)
		}
		switch clamp.Keep(p.Clamp.Keep) {
		case "", clamp.KeepHead, clamp.KeepTail, clamp.KeepHeadTail:
		default:
			bad(key+".clamp.keep", "must be head, tail or head_tail; got %q", p.Clamp.Keep)
		}
		cp := p.Compress
		for k, v := range map[string]string{"strategy": cp.Strategy, "fallback_strategy": cp.FallbackStrategy} {
			if !slices.Contains(strategyNames, v) {
				bad(key+".compress."+k, "must be one of %s; got %q", strings.Join(strategyNames, ", "), v)
			}
		}
		if cp.TargetRatio != 0 && (cp.TargetRatio < 1.5 || cp.TargetRatio > 100) {
			bad(key+".compress.target_ratio", "must be 0 (off) or between 1.5 and 100, got %g", cp.TargetRatio)
		}
		if cp.MinBytes < 0 || cp.MaxBytes < 0 || (cp.MaxBytes > 0 && cp.MaxBytes <= cp.MinBytes) {
			bad(key+".compress", "min_bytes and max_bytes must not be negative, and max_bytes (0 = no bound) must exceed min_bytes")
		}
		if cp.Enabled && (cp.MaxBytes == 0 || int64(cp.MaxBytes) >= c.Store.TenantMaxBytes) {
			// An original the store cannot hold would fail every time
			// (review finding 17).
			bad(key+".compress.max_bytes", "must be set and below store.tenant_max_bytes (%d), got %d", c.Store.TenantMaxBytes, cp.MaxBytes)
		}
		if cp.TargetBytes < 256 {
			bad(key+".compress.target_bytes", "must be at least 256, got %d", cp.TargetBytes)
		}
		if cp.SimpleWords < 1 {
			bad(key+".compress.simple_words", "must be positive")
		}
		if l := cp.LLM; l.Dialect != "openai_chat" && l.Dialect != "anthropic" {
			bad(key+".compress.llm.dialect", "must be openai_chat or anthropic; got %q", l.Dialect)
		} else if !strings.HasPrefix(l.Path, "/") || l.Timeout <= 0 || l.MaxConcurrent < 1 || l.Rate <= 0 || l.RequestBudget <= 0 {
			bad(key+".compress.llm", "path must start with /, timeout, max_concurrent, rate and request_budget must be positive")
		}
		rp := p.Recovery
		for k, rungs := range map[string][]string{"rungs": rp.Rungs, "provider_limit_rungs": rp.ProviderLimitRungs} {
			for _, r := range rungs {
				if !slices.Contains(rungNames, r) {
					bad(key+".recovery."+k, "unknown rung %q; allowed: %s", r, strings.Join(rungNames, ", "))
				}
			}
		}
		if rp.TiersKeepRecent < 1 || rp.TiersKeepRecent > 1000 {
			bad(key+".recovery.tiers_keep_recent", "must be between 1 and 1000, got %d", rp.TiersKeepRecent)
		}
		if rp.MaxReplays < 0 || rp.MaxReplays > 10 {
			bad(key+".recovery.max_replays", "must be between 0 and 10, got %d", rp.MaxReplays)
		}
		if rp.ContextShare <= 0 || rp.ContextShare > 1 {
			bad(key+".recovery.context_share", "must be in (0, 1], got %v", rp.ContextShare)
		}
		if rp.TruncateChars < 16 || rp.DefaultWindow < 1024 || rp.MaxErrorBytes < 1024 {
			bad(key+".recovery", "truncate_chars must be at least 16, default_window at least 1024, max_error_bytes at least 1024")
		}
		if rp.MinOutputTokens < 1 {
			bad(key+".recovery.min_output_tokens", "must be at least 1, got %d", rp.MinOutputTokens)
		}
		for m, to := range rp.FallbackModels {
			if m == "" || to == "" || strings.EqualFold(m, to) {
				bad(key+".recovery.fallback_models", "entry %q: a model prefix and a different model to replay with", m)
			}
		}
		for m, w := range rp.Windows {
			if m == "" || w < 1024 {
				bad(key+".recovery.windows", "entry %q: a model prefix and a window of at least 1024 tokens", m)
			}
		}
		if p.Expand.ContextShare <= 0 || p.Expand.ContextShare > 1 {
			bad(key+".expand.context_share", "must be in (0, 1], got %v", p.Expand.ContextShare)
		}
		if p.Expand.MaxLoops < 0 || p.Expand.MaxLoops > 20 {
			bad(key+".expand.max_loops", "must be between 0 and 20, got %d", p.Expand.MaxLoops)
		}
		if tp := p.Tiers; tp.Enabled {
			if tp.KeepRecent < 1 || tp.KeepRecent > 1000 {
				bad(key+".tiers.keep_recent", "must be between 1 and 1000, got %d", tp.KeepRecent)
			}
			if tp.TriggerShare <= 0 || tp.TriggerShare > 1 || tp.TargetShare <= 0 || tp.TargetShare >= tp.TriggerShare {
				bad(key+".tiers", "want 0 < target_share < trigger_share <= 1, got %v and %v", tp.TargetShare, tp.TriggerShare)
			}
			if tp.TriggerTokens < 0 || tp.TargetTokens < 0 || tp.TriggerTokens > 0 && tp.TargetTokens >= tp.TriggerTokens {
				bad(key+".tiers", "want 0 <= target_tokens < trigger_tokens (or both 0), got %d and %d", tp.TargetTokens, tp.TriggerTokens)
			}
			if tp.WindowTokens != 0 && tp.WindowTokens < 1024 {
				bad(key+".tiers.window_tokens", "must be 0 (the model's window) or at least 1024, got %d", tp.WindowTokens)
			}
			switch tp.Flatten {
			case "", "off", history.FlattenOld, history.FlattenAll:
			default:
				bad(key+".tiers.flatten", "must be off, old or all, got %q", tp.Flatten)
			}
			if tp.InputMinBytes < -1 || tp.InputMinBytes > 0 && tp.InputMinBytes < 64 {
				bad(key+".tiers.input_min_bytes", "must be -1 (off) or at least 64, got %d", tp.InputMinBytes)
			}
			if tp.MiddleRatio != 0 && (tp.MiddleRatio < 1.5 || tp.MiddleRatio > 100) {
				bad(key+".tiers.middle_ratio", "must be 0 (off) or between 1.5 and 100, got %v", tp.MiddleRatio)
			}
			if _, ok := history.PricesFor(tp.CostModel, wire.Anthropic); !ok {
				bad(key+".tiers.cost_model", "must be auto, anthropic, openai, gemini or none, got %q", tp.CostModel)
			}
		}
	}
	if len(errs.List) == 0 {
		return nil
	}
	errs.sort()
	return &errs
}

// ProfileNames returns the profile names sorted.
func (c *Config) ProfileNames() []string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// rungNames are the recovery rungs a profile can name.
var rungNames = []string{rungMaxTokens, "tiers", "clamp", "compress", "truncate"}

// strategyNames are the compression strategies a profile can name.
var strategyNames = []string{"structural", "simple", "llm", "passthrough"}

func dialectNames() string {
	s := make([]string, len(wire.Dialects))
	for i, d := range wire.Dialects {
		s[i] = string(d)
	}
	return strings.Join(s, ", ")
}

func yamlToMap(b []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, fmt.Errorf("config: top level must be a mapping: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// merge overlays src on dst: mappings merge key by key, anything else
// (scalars, lists) replaces.
func merge(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if v == nil {
			// A key written with no value (`default:`) keeps what it
			// merges over, as the typed decode does for null.
			if _, ok := dst[k]; ok {
				continue
			}
		}
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			dst[k] = merge(dm, sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if vm, ok := v.(map[string]any); ok {
			v = clone(vm)
		}
		out[k] = v
	}
	return out
}
