package extproc

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/overflow"
	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/usage"
	"github.com/toolproc/toolproc/filters/wire"
)

// Metrics are toolproc's Prometheus series. Each Server gets its own
// registry so tests can run several servers in one process.
type Metrics struct {
	ActiveStreams   prometheus.Gauge
	Streams         *prometheus.CounterVec // outcome: ok, error
	Requests        *prometheus.CounterVec // dialect, profile, outcome
	Passthrough     *prometheus.CounterVec // reason
	ToolResults     *prometheus.CounterVec // dialect, action
	ToolResultBytes *prometheus.CounterVec // dialect, stage
	BodyBytes       *prometheus.CounterVec // direction, stage
	UnknownProfile  prometheus.Counter
	Responses       *prometheus.CounterVec   // dialect, action
	Replays         *prometheus.CounterVec   // purpose, outcome
	ReplaySeconds   *prometheus.HistogramVec // purpose
	Duration        *prometheus.HistogramVec // phase
	Compress        *prometheus.CounterVec   // dialect, outcome
	CompressBytes   *prometheus.CounterVec   // dialect, stage
	CompressCache   *prometheus.CounterVec   // result: hit, miss
	StoreErrors     *prometheus.CounterVec   // op
	Expansions      *prometheus.CounterVec   // dialect, outcome
	Recoveries      *prometheus.CounterVec   // provider, class, rung, outcome
	TierRewrites    *prometheus.CounterVec   // dialect
	TierBytes       *prometheus.CounterVec   // dialect
	TierStep        *prometheus.HistogramVec // dialect
	UsageTokens     *prometheus.CounterVec   // profile, dialect, kind
	RemovedTokens   *prometheus.CounterVec   // profile, dialect
	UsageAnswers    *prometheus.CounterVec   // dialect, outcome
	TierCacheWrite  *prometheus.CounterVec   // profile, dialect
	Bypass          *prometheus.CounterVec   // dialect
	BuildInfo       *prometheus.GaugeVec     // version, revision, goversion: always 1
	Irrecoverable   *prometheus.CounterVec   // dialect
}

// Request outcomes.
const (
	outcomeRewritten   = "rewritten"
	outcomeUnchanged   = "unchanged"
	outcomePassthrough = "passthrough"
	outcomeRejected    = "rejected"
	outcomeSkipped     = "skipped"
	outcomeBypassed    = "bypassed"
)

// Pass-through reasons (a request toolproc could not or would not rewrite).
const (
	reasonMalformedJSON   = "malformed_json"
	reasonTooDeep         = "too_deep"
	reasonDuplicateKeys   = "duplicate_keys"
	reasonInternalError   = "internal_error"
	reasonContentEncoding = "content_encoding"
	reasonPartialBody     = "partial_body"
	reasonBodyTooLarge    = "body_too_large"
	reasonTrailers        = "trailers"
	reasonReplayLoop      = "replay_loop"
	reasonSigV4           = "sigv4"
)

func newMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ActiveStreams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolproc_active_streams", Help: "ext_proc streams currently open.",
		}),
		Streams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_streams_total", Help: "ext_proc streams ended, by outcome (ok, error).",
		}, []string{"outcome"}),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_requests_total", Help: "LLM requests seen, by dialect, profile and outcome (rewritten, unchanged, passthrough, rejected, skipped, bypassed).",
		}, []string{"dialect", "profile", "outcome"}),
		Passthrough: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_passthrough_total", Help: "Bodies passed through unchanged because toolproc could not or would not process them, by reason (malformed_json, too_deep, duplicate_keys, internal_error, content_encoding, partial_body, body_too_large, trailers, replay_loop, sigv4; a stream repair that hit its caps: hold_limit, event_too_large).",
		}, []string{"reason"}),
		ToolResults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_tool_results_total", Help: "Tool results seen in requests (action=seen) and rewritten, by dialect and the step that changed them (clamp, compress, tiers, overflow_clamp, overflow_truncate).",
		}, []string{"dialect", "action"}),
		ToolResultBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_tool_result_bytes_total", Help: "Text bytes of rewritten tool results before and after rewriting, by dialect and stage (before, after).",
		}, []string{"dialect", "stage"}),
		BodyBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_body_bytes_total", Help: "Request body bytes of processed LLM requests, by direction (request) and stage: received (in) and forwarded (out).",
		}, []string{"direction", "stage"}),
		Responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_responses_total", Help: "Successful answers to processed requests, by dialect and repair action (stream_normalized, json_to_sse, json_checked, stream_expanding, json_expanding, stream_gated, passthrough_encoded).",
		}, []string{"dialect", "action"}),
		Replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_replays_total", Help: "Requests toolproc sent itself through Envoy's replay listener, by purpose (expand_context, compress, overflow_<rung>) and outcome (2xx, 4xx, 5xx: the status class; error: no answer; refused: not a recognised LLM route, never sent).",
		}, []string{"purpose", "outcome"}),
		ReplaySeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "toolproc_replay_seconds", Help: "Time to the response headers of a replay, by purpose (expand_context, compress, overflow_<rung>).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"purpose"}),
		UnknownProfile: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolproc_unknown_profile_total", Help: "Requests that named a profile not in the config; the default profile was used.",
		}),
		Compress: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_compress_total", Help: "Compression decisions for large tool results, by dialect and outcome (compressed, not_smaller, skipped_large, skipped_tool, store_error, already_referenced; skipped_anonymous: once per request whose caller has no credential or tenant header, which gets the clamp only).",
		}, []string{"dialect", "outcome"}),
		CompressBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_compress_bytes_total", Help: "Bytes of compressed tool results before and after compression (reference lines included).",
		}, []string{"dialect", "stage"}),
		CompressCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_compress_cache_total", Help: "Compressed-result cache lookups, by result (hit, miss).",
		}, []string{"result"}),
		StoreErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_store_errors_total", Help: "Shadow store failures, by operation (compress: compression degraded to the clamp; expand: an id could not be read; tiers: an original of a summarised result could not be kept; recovery: the truncate rung's originals could not be kept, so it cut without references; secret: the deployment secret could not be read, so no references were written).",
		}, []string{"op"}),
		Expansions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_expansions_total", Help: "expand_context calls answered by toolproc, by dialect and outcome (requested, resolved, paged: an original returned in parts, not_found, store_error, loop_limit, replay_failed).",
		}, []string{"dialect", "outcome"}),
		Irrecoverable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_irrecoverable_results_total", Help: "Tool results that lost content with no original kept to read back (clamped, or summarised where no reference could be given); each says so in its text.",
		}, []string{"dialect"}),
		Recoveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_recoveries_total", Help: "Overflow recovery attempts, by provider, class (context_overflow, payload_too_large, provider_limit), rung and outcome (per rung tried: recovered, still_overflow, not_ours, replay_failed, same_body: the provider already refused exactly these bytes, no replay; rung=all exhausted; rung=none nothing_to_shrink).",
		}, []string{"provider", "class", "rung", "outcome"}),
		TierRewrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_tier_rewrites_total", Help: "Requests whose old tool exchanges the tool-history tiers summarised, by dialect.",
		}, []string{"dialect"}),
		TierBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_tier_bytes_cleared_total", Help: "Request bytes the tool-history tiers' summaries took out, by dialect.",
		}, []string{"dialect"}),
		TierStep: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolproc_tier_step",
			Help:    "The tier step of rewritten requests (how many times the cut between old and recent exchanges has moved in the conversation), by dialect.",
			Buckets: []float64{1, 2, 3, 4, 6, 8, 12, 16, 24, 32},
		}, []string{"dialect"}),
		UsageTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_usage_tokens_total", Help: "Tokens the provider billed for answers to processed requests (replays included), read from each answer's usage, by profile, dialect and kind (input: billed at the base input rate; cache_read; cache_write; output). The kinds are disjoint: their sum is the bill.",
		}, []string{"profile", "dialect", "kind"}),
		RemovedTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_removed_tokens_total", Help: "Prompt tokens toolproc took out of requests (clamp, compression, tiers), on the provider's scale: bytes removed times the request's billed prompt tokens per byte sent (4 bytes a token when the answer carried no usage), by profile and dialect.",
		}, []string{"profile", "dialect"}),
		UsageAnswers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_usage_answers_total", Help: "Answers whose usage toolproc read, by dialect and outcome (read, missing, too_large, bad_frame).",
		}, []string{"dialect", "outcome"}),
		TierCacheWrite: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_tier_cache_write_tokens_total", Help: "cache_write tokens billed for requests the tool-history tiers rewrote (tier step > 0), by profile and dialect: the cache writes a tier step can cause. A step that did not move re-reads its prefix and writes little.",
		}, []string{"profile", "dialect"}),
		Bypass: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolproc_bypass_total", Help: "Requests that opted out with x-toolproc-bypass: 1 and passed both ways untouched, by dialect.",
		}, []string{"dialect"}),
		BuildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolproc_build_info", Help: "Always 1; the labels say what the process runs: its version, VCS revision and Go version (toolproc version).",
		}, []string{"version", "revision", "goversion"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolproc_processing_seconds",
			Help:    "Time spent handling one ext_proc message, by phase (request_headers, request_body, request_trailers, response_headers, response_body, response_trailers).",
			Buckets: prometheus.ExponentialBuckets(0.00005, 4, 10),
		}, []string{"phase"}),
	}
	reg.MustRegister(m.ActiveStreams, m.Streams, m.Requests, m.Passthrough, m.ToolResults,
		m.ToolResultBytes, m.BodyBytes, m.UnknownProfile, m.Responses, m.Replays, m.ReplaySeconds, m.Duration,
		m.Compress, m.CompressBytes, m.CompressCache, m.StoreErrors, m.Expansions, m.Recoveries,
		m.TierRewrites, m.TierBytes, m.TierStep, m.UsageTokens, m.RemovedTokens, m.UsageAnswers, m.TierCacheWrite, m.Bypass, m.BuildInfo, m.Irrecoverable)
	b := Build()
	m.BuildInfo.WithLabelValues(b.Version, b.ShortRevision(), b.GoVersion).Set(1)
	return m
}

// The closed label sets. Every series of them is created at 0 when the
// server starts (initSeries), so a fresh dashboard shows 0 rather than
// "No data", and a rate() over a series that has never moved is 0, not
// empty. Each value is named in its family's help and in the README
// (TestMetricLabelsDocumented).
var (
	streamOutcomes  = []string{"ok", "error"}
	requestOutcomes = []string{outcomeRewritten, outcomeUnchanged, outcomePassthrough, outcomeRejected, outcomeSkipped, outcomeBypassed}
	// The reasons a body passes through, and the two of a stream repair
	// that hit its caps (filters/stream GaveUp).
	passthroughReasons = []string{reasonMalformedJSON, reasonTooDeep, reasonDuplicateKeys, reasonInternalError,
		reasonContentEncoding, reasonPartialBody, reasonBodyTooLarge, reasonTrailers, reasonReplayLoop, reasonSigV4,
		"hold_limit", "event_too_large"}
	// seen, then the pipeline steps that change results (their Name()).
	toolResultActions = []string{"seen", "clamp", shadow.FilterName, history.FilterName, "overflow_clamp", "overflow_truncate"}
	responseActions   = []string{"stream_normalized", "json_to_sse", "json_checked", "stream_expanding", "json_expanding", "stream_gated", "passthrough_encoded"}
	replayPurposes    = []string{replayPurposeExpand, replayPurposeCompress, "overflow_tiers", "overflow_clamp", "overflow_compress", "overflow_truncate"}
	replayOutcomes    = []string{"2xx", "4xx", "5xx", "error", "refused"}
	phases            = []string{"request_headers", "request_body", "request_trailers", "response_headers", "response_body", "response_trailers"}
	compressOutcomes  = []string{shadow.OutcomeCompressed, shadow.OutcomeNotSmaller, shadow.OutcomeLarge, shadow.OutcomeTool,
		shadow.OutcomeStoreError, shadow.OutcomeHasRef, "skipped_anonymous"}
	cacheResults      = []string{"hit", "miss"}
	storeOps          = []string{"compress", "expand", "tiers", "recovery", "secret"}
	expansionOutcomes = []string{"requested", "resolved", "paged", "not_found", "store_error", "loop_limit", "replay_failed"}
	recoveryProviders = []string{overflow.ProviderOpenAI, overflow.ProviderAnthropic, overflow.ProviderGemini, overflow.ProviderBedrock,
		overflow.ProviderOpenRouter, overflow.ProviderAzure, overflow.ProviderVertex, overflow.ProviderUnknown}
	recoveryClasses = []overflow.Class{overflow.ContextOverflow, overflow.PayloadTooLarge, overflow.ProviderLimit}
	// Per rung tried; per error, rung=all or rung=none.
	rungOutcomes   = []string{recoveryRecovered, "still_overflow", recoveryNotOurs, "replay_failed", "same_body"}
	usageOutcomes  = []string{"read", "missing", "too_large", "bad_frame"}
	stages         = []string{"before", "after"}
	bodyDirections = []string{"in", "out"}
)

// initSeries creates every series of the closed label sets at 0. The sets
// are bounded: the configured profiles, the five dialects, and the values
// above.
func (m *Metrics) initSeries(profiles []string) {
	for _, o := range streamOutcomes {
		m.Streams.WithLabelValues(o)
	}
	for _, r := range passthroughReasons {
		m.Passthrough.WithLabelValues(r)
	}
	for _, s := range bodyDirections {
		m.BodyBytes.WithLabelValues("request", s)
	}
	for _, p := range phases {
		m.Duration.WithLabelValues(p)
	}
	for _, p := range replayPurposes {
		m.ReplaySeconds.WithLabelValues(p)
		for _, o := range replayOutcomes {
			m.Replays.WithLabelValues(p, o)
		}
	}
	for _, r := range cacheResults {
		m.CompressCache.WithLabelValues(r)
	}
	for _, op := range storeOps {
		m.StoreErrors.WithLabelValues(op)
	}
	for _, pr := range recoveryProviders {
		for _, c := range recoveryClasses {
			if c == overflow.ProviderLimit && pr != overflow.ProviderOpenRouter {
				continue // only OpenRouter's raw "ERROR" is classed so (overflow.Classify)
			}
			cl := string(c)
			m.Recoveries.WithLabelValues(pr, cl, "all", recoveryExhausted)
			m.Recoveries.WithLabelValues(pr, cl, "none", recoveryNoRung)
			for _, rung := range rungNames {
				for _, o := range rungOutcomes {
					m.Recoveries.WithLabelValues(pr, cl, rung, o)
				}
			}
		}
	}
	for _, d := range wire.Dialects {
		ds := string(d)
		for _, p := range profiles {
			for _, o := range requestOutcomes {
				m.Requests.WithLabelValues(ds, p, o)
			}
			for _, k := range usage.Kinds {
				m.UsageTokens.WithLabelValues(p, ds, k)
			}
			m.RemovedTokens.WithLabelValues(p, ds)
			m.TierCacheWrite.WithLabelValues(p, ds)
		}
		for _, a := range toolResultActions {
			m.ToolResults.WithLabelValues(ds, a)
		}
		for _, a := range responseActions {
			m.Responses.WithLabelValues(ds, a)
		}
		for _, o := range compressOutcomes {
			m.Compress.WithLabelValues(ds, o)
		}
		for _, o := range expansionOutcomes {
			m.Expansions.WithLabelValues(ds, o)
		}
		for _, o := range usageOutcomes {
			m.UsageAnswers.WithLabelValues(ds, o)
		}
		for _, s := range stages {
			m.ToolResultBytes.WithLabelValues(ds, s)
			m.CompressBytes.WithLabelValues(ds, s)
		}
		m.TierRewrites.WithLabelValues(ds)
		m.TierBytes.WithLabelValues(ds)
		m.TierStep.WithLabelValues(ds)
		m.Bypass.WithLabelValues(ds)
	}
}
