package wiretest

import (
	"strings"

	"github.com/tidwall/gjson"
)

// AllText is every string value of a body, decoded, one per line: where
// a test looks for text that may sit in any message (a flattened tool
// result, a summary's key line).
func AllText(body []byte) string {
	var b strings.Builder
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		switch {
		case v.Type == gjson.String:
			b.WriteString(v.Str)
			b.WriteByte('\n')
		case v.IsObject() || v.IsArray():
			v.ForEach(func(_, x gjson.Result) bool { walk(x); return true })
		}
	}
	walk(gjson.ParseBytes(body))
	return b.String()
}
