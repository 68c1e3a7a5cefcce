package extproc

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	p := cfg.Profiles[DefaultProfile]
	if cfg.Server.GRPCAddr != "127.0.0.1:50051" || cfg.Server.AdminAddr != "127.0.0.1:9000" ||
		cfg.Server.MaxRecvMsgBytes != 64<<20 || time.Duration(cfg.Server.ShutdownGrace) != 15*time.Second {
		t.Fatalf("server = %+v", cfg.Server)
	}
	if !p.Enabled || p.FailClosed() || p.Clamp.MaxBytes != 51200 || p.Clamp.MaxLines != 2000 || p.Clamp.Keep != "head" || !p.Clamp.Enabled {
		t.Fatalf("default profile = %+v", p)
	}
	if !p.Handles("openai_chat") || !p.Handles("anthropic") || !p.Handles("openai_responses") || !p.Handles("gemini") || !p.Handles("bedrock") {
		t.Fatal("default profile must handle every dialect")
	}
}

func TestProfilesInheritFromDefault(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
profiles:
  default:
    clamp: {max_lines: 500}
  tail:
    clamp: {keep: tail}
  anthropic-only:
    dialects: [anthropic]
`))
	if err != nil {
		t.Fatal(err)
	}
	tail := cfg.Profiles["tail"]
	if tail.Clamp.Keep != "tail" || tail.Clamp.MaxLines != 500 || tail.Clamp.MaxBytes != 51200 {
		t.Fatalf("tail = %+v", tail.Clamp)
	}
	if a := cfg.Profiles["anthropic-only"]; a.Handles("openai_chat") || !a.Handles("anthropic") {
		t.Fatalf("dialect list must replace, not merge: %v", a.Dialects)
	}
}

// TestConfigOffWord: YAML 1.1 reads a bare off as false; the settings
// documented with an "off" value take it.
func TestConfigOffWord(t *testing.T) {
	c, err := ParseConfig([]byte(`profiles: {default: {tiers: {flatten: off}, shape: {mode: off}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Profiles[DefaultProfile]; p.Tiers.Flatten != "off" || p.Shape.Mode != "off" || p.Shape.TextOnly() {
		t.Fatalf("flatten %q, mode %q", p.Tiers.Flatten, p.Shape.Mode)
	}
	if _, err := ParseConfig([]byte(`profiles: {default: {shape: {mode: text_only}}}`)); err == nil ||
		!strings.Contains(err.Error(), "not gemini") || !strings.Contains(err.Error(), "xml_tool_calls") {
		t.Fatalf("text_only without its dialect and answer settings: %v", err)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	cases := map[string]string{
		`profiles: {default: {clamp: {keep: middle}}}`:   "profiles.default.clamp",
		`profiles: {x: {failure_mode: maybe}}`:           "profiles.x.failure_mode",
		`profiles: {x: {dialects: [gemini-ish]}}`:        "profiles.x.dialects",
		`profiles: {x: {clamp: {max_bytes: 10}}}`:        "profiles.x.clamp",
		`server: {max_recv_msg_bytes: 1000}`:             "server.max_recv_msg_bytes",
		`log: {level: loud}`:                             "log.level",
		`profiles: {default: {clamp: {max_byte: 10}}}`:   "profiles.default.clamp.max_byte: unknown key; did you mean max_bytes?",
		`server: {shutdown_grace: soon}`:                 "duration",
		`profiles: {x: 3}`:                               "profiles.x",
		"server: [1, 2]":                                 "server: expected a mapping; got a list",
		`profiles: {x: {clamp: {keep_reads: middle}}}`:   "profiles.x.clamp.keep_reads",
		`profiles: {x: {compress: {target_ratio: 1.1}}}`: "profiles.x.compress.target_ratio",
		`profiles: {x: {tiers: {middle_ratio: 1.2}}}`:    "profiles.x.tiers.middle_ratio",
		`profiles: {x: {tiers: {cost_model: cheap}}}`:    "profiles.x.tiers.cost_model",
	}
	for in, want := range cases {
		_, err := ParseConfig([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConfig(%q) error = %v, want it to mention %q", in, err, want)
		}
	}
}

// TestDefaultNormalizeOffKeepsXMLProfile: turning the default profile's
// stream repair off must not make the embedded xml profile, which inherits
// from it and needs the repair, fail validation.
func TestDefaultNormalizeOffKeepsXMLProfile(t *testing.T) {
	cfg, err := ParseConfig([]byte("profiles: {default: {stream: {normalize: false}}}"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Profiles["default"].Stream.Normalize || !cfg.Profiles["xml"].Stream.Normalize {
		t.Fatalf("normalize: default %v, xml %v", cfg.Profiles["default"].Stream.Normalize, cfg.Profiles["xml"].Stream.Normalize)
	}
}

// The tiers' middle tier and cost model reach the history options: 0 turns
// the middle tier off, the cost model's name passes as written.
func TestTiersMiddleAndCostModel(t *testing.T) {
	c, err := ParseConfig([]byte(`profiles: {default: {tiers: {middle_ratio: 0, cost_model: none}}, wide: {tiers: {middle_ratio: 8}}}`))
	if err != nil {
		t.Fatal(err)
	}
	def, wide := tiersOptions(c.Profiles["default"]), tiersOptions(c.Profiles["wide"])
	if def.MiddleRatio >= 0 || def.CostModel != "none" {
		t.Errorf("default: middle %v, cost model %q", def.MiddleRatio, def.CostModel)
	}
	if wide.MiddleRatio != 8 || wide.CostModel != "none" {
		t.Errorf("wide (inherits the cost model): middle %v, cost model %q", wide.MiddleRatio, wide.CostModel)
	}
	d := DefaultConfig().Profiles[DefaultProfile].Tiers
	if d.MiddleRatio != 4 || d.CostModel != "auto" {
		t.Errorf("embedded defaults: middle %v, cost model %q", d.MiddleRatio, d.CostModel)
	}
}
