package overflow

import (
	"math"
	"testing"
)

func TestWindow(t *testing.T) {
	cases := []struct {
		model string
		want  int
	}{
		{"gpt-4o", 128_000},
		{"gpt-4o-2024-08-06", 128_000},
		{"gpt-4o-mini-2024-07-18", 128_000},
		{"gpt-4", 8_192},
		{"gpt-4-turbo-2024-04-09", 128_000},
		{"gpt-4.1", 1_047_576},
		{"gpt-4.1-mini-2025-04-14", 1_047_576},
		{"gpt-5", 400_000},
		{"gpt-5-mini", 400_000},
		{"gpt-5-codex", 400_000},
		{"gpt-5-chat-latest", 128_000},
		{"o1", 200_000},
		{"o1-mini", 128_000},
		{"o3-mini-2025-01-31", 200_000},
		{"o4-mini", 200_000},
		{"claude-sonnet-4-5", 200_000},
		{"claude-3-5-haiku-20241022", 200_000},
		{"Claude-Opus-4-1", 200_000}, // case-insensitive
		{"gemini-2.5-pro", 1_048_576},
		{"gemini-2.5-flash-lite-preview-06-17", 1_048_576},
		{"gemini-2.0-flash-001", 1_048_576},
		{"gemini-1.5-pro-002", 2_097_152},
		// Routing prefixes.
		{"openai/gpt-4o", 128_000},
		{"openrouter/openai/gpt-4.1", 1_047_576},
		{"anthropic/claude-sonnet-4.5", 200_000},
		{"google/gemini-2.5-pro", 1_048_576},
		{"models/gemini-2.0-flash", 1_048_576},
		{"projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro", 1_048_576},
		// Bedrock model ids, inference profiles and ARNs.
		{"anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000},
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", 200_000},
		{"global.anthropic.claude-sonnet-4-20250514-v1:0", 200_000},
		{"us-gov.anthropic.claude-3-haiku-20240307-v1:0", 200_000},
		{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-3-5-sonnet-20240620-v1:0", 200_000},
		// Unknown: fallback.
		{"meta.llama3-70b-instruct-v1:0", -1},
		{"mistral-large-latest", -1},
		{"", -1},
		{"  ", -1},
		{"4.1", -1}, // a dotted name that is not a routing segment
	}
	for _, c := range cases {
		if got := Window(c.model, nil, -1); got != c.want {
			t.Errorf("Window(%q) = %d, want %d", c.model, got, c.want)
		}
	}
}

func TestWindowCustomTable(t *testing.T) {
	table := map[string]int{"my-": 1000, "my-model-": 2000, "acme/raw": 3000, "GPT-4O": 9}
	cases := []struct {
		model string
		want  int
	}{
		{"my-other", 1000},
		{"my-model-7b", 2000},     // longest prefix
		{"acme/raw-1", 3000},      // full name tried before stripping
		{"router/my-model", 1000}, // "my-model" lacks the trailing '-': shorter key
		{"gpt-4o", 9},             // keys compare case-insensitively
		{"claude-sonnet-4-5", 42}, // the custom table replaces the defaults
	}
	for _, c := range cases {
		if got := Window(c.model, table, 42); got != c.want {
			t.Errorf("Window(%q) = %d, want %d", c.model, got, c.want)
		}
	}
	if got := Window("x", map[string]int{}, 7); got != 7 {
		t.Errorf("empty table: %d", got)
	}
	// Keys equal but for case: the lexically smaller key decides, always.
	tie := map[string]int{"Abc": 1, "abc": 2, "ABC": 3}
	for range 20 {
		if got := Window("abcdef", tie, 0); got != 3 {
			t.Fatalf("tie broke to %d, want 3 (key %q)", got, "ABC")
		}
	}
}

func TestShareBytes(t *testing.T) {
	cases := []struct {
		window int
		share  float64
		want   int
	}{
		{128_000, 0.3, 153_600},     // floor(38400)*4
		{200_000, 0.3, 240_000},     // Claude
		{1_048_576, 0.3, 1_258_288}, // floor(314572.8)=314572 → *4
		{400_000, 0.3, 480_000},
		{8_192, 0.3, 9_828}, // floor(2457.6)=2457 → 9828
		{1_000, 0.3, 2_000}, // floor 300*4 = 1200 < 2000
		{0, 0.3, 2_000},     // unknown window
		{-5, 0.3, 2_000},
		{128_000, 0, 2_000},
		{128_000, -1, 2_000},
		{128_000, math.NaN(), 2_000},
		{128_000, 2, 512_000}, // share above 1 reads as 1
	}
	for _, c := range cases {
		if got := ShareBytes(c.window, c.share); got != c.want {
			t.Errorf("ShareBytes(%d, %v) = %d, want %d", c.window, c.share, got, c.want)
		}
	}
	if got := ShareBytes(math.MaxInt, 1); got <= 0 || got%4 != 0 {
		t.Errorf("huge window: %d", got)
	}
}
