package wire

import (
	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// ArgsObject is a call's arguments (ToolResult.Args, ToolCall.Args) as an
// object: OpenAI Chat and Responses send them as a string of JSON, the
// other dialects as the object itself. The decoded string is untrusted JSON
// the body's depth check never saw, so it is checked before gjson looks
// into it; the zero Result when either is not valid JSON.
func ArgsObject(args string) gjson.Result {
	if !jsonsafe.ValidString(args) {
		return gjson.Result{}
	}
	v := gjson.Parse(args)
	if v.Type == gjson.String {
		inner := v.String()
		if !jsonsafe.ValidString(inner) {
			return gjson.Result{}
		}
		v = gjson.Parse(inner)
	}
	return v
}
