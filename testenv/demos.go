package testenv

// demos are the models the fake upstream plays on header x-toolproc-scenario (README,
// "Try it"): "expand" asks expand_context for the shadow id it sees and then
// quotes the line of the original that carries the needle; "overflow"
// refuses any tool result over 512 characters with OpenRouter's raw "ERROR"
// 400, then answers like "expand".
var demos = map[string]func(RecordedRequest) *ScriptedResponse{
	"expand":   ExpandModel{Needle: "NEEDLE", Preamble: "Let me read the full log. "}.Script(),
	"overflow": OverflowModel{MaxResult: 512, Error: OpenRouterRawError, Then: ExpandModel{Needle: "NEEDLE"}}.Script(),
}

// WithDemos plays the demo models on ScenarioHeader, else next (nil: the default).
func WithDemos(next func(RecordedRequest) *ScriptedResponse) func(RecordedRequest) *ScriptedResponse {
	return func(r RecordedRequest) *ScriptedResponse {
		if demo, ok := demos[r.Header.Get(ScenarioHeader)]; ok {
			return demo(r)
		}
		if next == nil {
			return nil
		}
		return next(r)
	}
}
