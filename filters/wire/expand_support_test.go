package wire

import "testing"

// Review findings 12, 13 and 15: references only where the model may call
// expand_context and toolproc can answer every call.
func TestExpandBlocked(t *testing.T) {
	oai := func(extra string) []byte {
		return []byte(`{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"run"}}]` + extra + `}`)
	}
	for _, tc := range []struct {
		name string
		ep   Endpoint
		ask  ClientAsk
		body []byte
		want string
	}{
		{"openai auto", Endpoint{Dialect: OpenAIChat}, ClientAsk{}, oai(`,"tool_choice":"auto"`), ""},
		{"openai absent", Endpoint{Dialect: OpenAIChat}, ClientAsk{Stream: true}, oai(``), ""},
		{"openai none", Endpoint{Dialect: OpenAIChat}, ClientAsk{}, oai(`,"tool_choice":"none"`), "tool_choice"},
		{"openai required", Endpoint{Dialect: OpenAIChat}, ClientAsk{}, oai(`,"tool_choice":"required"`), "tool_choice"},
		{"openai named", Endpoint{Dialect: OpenAIChat}, ClientAsk{}, oai(`,"tool_choice":{"type":"function","function":{"name":"run"}}`), "tool_choice"},
		{"openai allowed_tools", Endpoint{Dialect: OpenAIChat}, ClientAsk{}, oai(`,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`), "tool_choice"},
		{"openai n=2", Endpoint{Dialect: OpenAIChat}, ClientAsk{}, oai(`,"n":2`), "several_choices"},
		{"openai n=1", Endpoint{Dialect: OpenAIChat}, ClientAsk{}, oai(`,"n":1`), ""},
		{"responses previous_response_id", Endpoint{Dialect: OpenAIResponses}, ClientAsk{}, []byte(`{"model":"o4","previous_response_id":"resp_1","input":[]}`), "previous_response"},
		{"responses none", Endpoint{Dialect: OpenAIResponses}, ClientAsk{}, []byte(`{"model":"o4","tool_choice":"none","input":[]}`), "tool_choice"},
		{"responses auto", Endpoint{Dialect: OpenAIResponses}, ClientAsk{}, []byte(`{"model":"o4","tool_choice":"auto","input":[]}`), ""},
		{"anthropic auto", Endpoint{Dialect: Anthropic}, ClientAsk{}, []byte(`{"tool_choice":{"type":"auto"},"messages":[]}`), ""},
		{"anthropic none", Endpoint{Dialect: Anthropic}, ClientAsk{}, []byte(`{"tool_choice":{"type":"none"},"messages":[]}`), "tool_choice"},
		{"anthropic any", Endpoint{Dialect: Anthropic}, ClientAsk{}, []byte(`{"tool_choice":{"type":"any"},"messages":[]}`), "tool_choice"},
		{"anthropic tool", Endpoint{Dialect: Anthropic}, ClientAsk{}, []byte(`{"tool_choice":{"type":"tool","name":"run"},"messages":[]}`), "tool_choice"},
		{"gemini any with names", Endpoint{Dialect: Gemini}, ClientAsk{}, []byte(`{"contents":[],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["run_tests"]}}}`), "tool_choice"},
		{"gemini auto", Endpoint{Dialect: Gemini}, ClientAsk{}, []byte(`{"contents":[],"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`), ""},
		{"gemini candidates", Endpoint{Dialect: Gemini}, ClientAsk{}, []byte(`{"contents":[],"generationConfig":{"candidateCount":2}}`), "several_choices"},
		{"gemini stream", Endpoint{Dialect: Gemini}, ClientAsk{Stream: true}, []byte(`{"contents":[]}`), "stream"},
		{"gemini cached", Endpoint{Dialect: Gemini}, ClientAsk{}, []byte(`{"contents":[],"cachedContent":"c/1"}`), "cached_content"},
		{"bedrock any", Endpoint{Dialect: Bedrock}, ClientAsk{}, []byte(`{"messages":[],"toolConfig":{"tools":[],"toolChoice":{"any":{}}}}`), "tool_choice"},
		{"bedrock auto", Endpoint{Dialect: Bedrock}, ClientAsk{}, []byte(`{"messages":[],"toolConfig":{"tools":[],"toolChoice":{"auto":{}}}}`), ""},
	} {
		if got := ExpandBlocked(tc.ep, tc.ask, tc.body); got != tc.want {
			t.Errorf("%s: ExpandBlocked = %q, want %q", tc.name, got, tc.want)
		}
		if ExpandResolvable(tc.ep, tc.ask, tc.body) != (tc.want == "") {
			t.Errorf("%s: ExpandResolvable disagrees", tc.name)
		}
	}
}
