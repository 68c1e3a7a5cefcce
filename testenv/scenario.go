package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ScenarioHeader names the stream scenario a request wants the fake upstream
// to play. It passes through Envoy (and the stand-in) like any header.
const ScenarioHeader = "x-toolproc-scenario"

// XMLPrefix is the path prefix the conformance environments route to a
// profile with XML tool calls enabled (stream.xml_tool_calls).
const XMLPrefix = "/xml"

// Scenario is one scripted upstream answer and what a correct client must
// assemble from what toolproc delivers. Files: testdata/streams/<dialect>.json.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Dialect     string `json:"dialect"` // openai_chat, anthropic, openai_responses
	// XML routes the request through the profile that parses <invoke> text.
	XML bool `json:"xml"`
	// ClientStream is what the client asks for (stream:true/false).
	ClientStream bool `json:"client_stream"`
	IncludeUsage bool `json:"include_usage"`
	Upstream     struct {
		Status      int    `json:"status"`
		ContentType string `json:"content_type"`
		Body        string `json:"body"`
	} `json:"upstream"`
	Expect ScenarioExpect `json:"expect"`
}

// ScenarioExpect is what the client must end up with.
type ScenarioExpect struct {
	Text         string         `json:"text"`
	ToolCalls    []ExpectedCall `json:"tool_calls"`
	FinishReason string         `json:"finish_reason"` // OpenAI finish_reason / Anthropic stop_reason / Responses status
	// StreamError: the client must see an error (an upstream error mid-stream),
	// after receiving Text, and must not hang.
	StreamError bool `json:"stream_error"`
	// Usage, when set, is the total tokens the client must report.
	TotalTokens int `json:"total_tokens,omitempty"`
}

// ExpectedCall is one tool call the client must assemble. ID "" means any
// non-empty id; Arguments are compared as parsed JSON.
type ExpectedCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// LoadScenarios reads every scenario file in dir, sorted by dialect and name.
func LoadScenarios(dir string) ([]Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var all []Scenario
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var list []Scenario
		if err := json.Unmarshal(b, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, s := range list {
			if s.Name == "" || seen[s.Name] {
				return nil, fmt.Errorf("%s: scenario name %q empty or repeated", f, s.Name)
			}
			seen[s.Name] = true
			all = append(all, s)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Dialect != all[j].Dialect {
			return all[i].Dialect < all[j].Dialect
		}
		return all[i].Name < all[j].Name
	})
	return all, nil
}

// ScenarioScript makes a FakeUpstream play the scenario named in each
// request's ScenarioHeader, in small chunks so toolproc sees a real stream.
// Requests without the header get the default behaviour.
func ScenarioScript(scenarios []Scenario) func(RecordedRequest) *ScriptedResponse {
	byName := map[string]Scenario{}
	for _, s := range scenarios {
		byName[s.Name] = s
	}
	return func(r RecordedRequest) *ScriptedResponse {
		name := r.Header.Get(ScenarioHeader)
		if name == "" {
			return nil
		}
		s, ok := byName[name]
		if !ok {
			return &ScriptedResponse{Status: http.StatusNotFound, Body: []byte("unknown scenario " + name)}
		}
		status := s.Upstream.Status
		if status == 0 {
			status = http.StatusOK
		}
		ct := s.Upstream.ContentType
		if ct == "" {
			ct = "text/event-stream"
		}
		body := []byte(s.Upstream.Body)
		var chunks [][]byte
		if strings.HasPrefix(ct, "text/event-stream") {
			for i := 0; i < len(body); i += 37 {
				chunks = append(chunks, body[i:min(i+37, len(body))])
			}
		}
		return &ScriptedResponse{
			Status: status,
			Header: http.Header{"Content-Type": {ct}},
			Body:   body,
			Chunks: chunks,
		}
	}
}
