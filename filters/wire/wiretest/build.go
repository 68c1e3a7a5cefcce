package wiretest

import (
	"fmt"
	"strings"

	"github.com/toolproc/toolproc/filters/wire"
)

// Path returns a request path for dialect d.
func Path(d wire.Dialect) string {
	switch d {
	case wire.OpenAIChat:
		return "/v1/chat/completions"
	case wire.OpenAIResponses:
		return "/v1/responses"
	case wire.Anthropic:
		return "/v1/messages"
	case wire.Gemini:
		return "/v1beta/models/gemini-2.5-pro:generateContent"
	case wire.Bedrock:
		return "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse"
	}
	return "/"
}

// Request builds a valid request in dialect d holding one tool exchange per
// result, each answered by its tool result, in the shapes each provider
// accepts. Gemini results go in {"output": text} (the common wrapping of a
// text result), Bedrock results in a {"text"} block followed by a {"json"}
// block.
func Request(d wire.Dialect, results ...string) []byte {
	var b strings.Builder
	q := func(s string) string { return string(wire.QuoteString(s)) }
	switch d {
	case wire.OpenAIChat:
		b.WriteString(`{"model":"gpt-4o","stream":true,"messages":[{"role":"system","content":"You are a coding agent."},{"role":"user","content":"Fix the build."}`)
		for i, r := range results {
			fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"bash","arguments":%s}}]}`, i, q(fmt.Sprintf(`{"command":"go test ./pkg%d/..."}`, i)))
			fmt.Fprintf(&b, `,{"role":"tool","tool_call_id":"call_%d","content":%s}`, i, q(r))
		}
		b.WriteString(`],"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}]}`)
	case wire.OpenAIResponses:
		b.WriteString(`{"model":"gpt-5","instructions":"You are a coding agent.","stream":true,"input":[{"role":"user","content":"Fix the build."}`)
		for i, r := range results {
			fmt.Fprintf(&b, `,{"type":"function_call","call_id":"call_%d","name":"shell","arguments":%s,"id":"fc_%d","status":"completed"}`, i, q(`{"cmd":["go","test"]}`), i)
			fmt.Fprintf(&b, `,{"type":"function_call_output","call_id":"call_%d","output":%s}`, i, q(r))
		}
		b.WriteString(`],"tools":[{"type":"function","name":"shell","parameters":{"type":"object"}}]}`)
	case wire.Anthropic:
		b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"Fix the build."}`)
		for i, r := range results {
			fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"thinking","thinking":"Run the tests.","signature":"EqQBCkYIARgCIkBsig%d=="},{"type":"tool_use","id":"toolu_%02d","name":"Bash","input":{"command":"go test ./..."}}]}`, i, i)
			fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%02d","content":[{"type":"text","text":%s}],"cache_control":{"type":"ephemeral"}}]}`, i, q(r))
		}
		b.WriteString(`],"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}}]}`)
	case wire.Gemini:
		b.WriteString(`{"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},"contents":[{"role":"user","parts":[{"text":"Fix the build."}]}`)
		for i, r := range results {
			fmt.Fprintf(&b, `,{"role":"model","parts":[{"functionCall":{"name":"run_shell_%d","args":{"command":"go test"}},"thoughtSignature":"CiQB0e2Kb%d=="}]}`, i, i)
			fmt.Fprintf(&b, `,{"role":"user","parts":[{"functionResponse":{"name":"run_shell_%d","response":{"output":%s,"exit_code":1}}}]}`, i, q(r))
		}
		b.WriteString(`],"tools":[{"functionDeclarations":[{"name":"run_shell","parameters":{"type":"OBJECT"}}]}],"generationConfig":{}}`)
	case wire.Bedrock:
		b.WriteString(`{"system":[{"text":"You are a coding agent."}],"messages":[{"role":"user","content":[{"text":"Fix the build."}]}`)
		for i, r := range results {
			fmt.Fprintf(&b, `,{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_%d","name":"bash","input":{"command":"go test"}}}]}`, i)
			fmt.Fprintf(&b, `,{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_%d","content":[{"text":%s},{"json":{"exit_code":1,"stderr":%s}}],"status":"error"}}]}`, i, q(r), q(r))
		}
		b.WriteString(`],"toolConfig":{"tools":[{"toolSpec":{"name":"bash","inputSchema":{"json":{"type":"object"}}}}]},"inferenceConfig":{"maxTokens":1024}}`)
	}
	return []byte(b.String())
}

// LongOutput is a tool output of about size bytes: numbered log lines with
// multi-byte characters, so cuts land next to multi-byte runes.
func LongOutput(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "=== RUN TestPkg/case_%05d — héllo wörld 中文 🙂 ok\n", i)
	}
	return b.String()
}
