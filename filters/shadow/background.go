package shadow

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/wire"
)

// A background task's output is read by a call that does not name the
// command: Claude Code's TaskOutput and BashOutput ({"task_id": "b50b67f"})
// and Codex's write_stdin ({"session_id": 61185}). The command is in the
// call that started the task, whose result names the id ("Command running
// in background with ID: b50b67f.", "Process running with session ID
// 61185"). The output is compressed with that call's hint, as the command's
// own output would be: its kind read from the command, its query terms from
// the command's operands. Both calls are in the same request, so the hint,
// and the compressed bytes, are the same on every turn.

// backgroundReaders are the tools that read a background task's output, by
// the argument naming the task.
var backgroundReaders = map[string][]string{
	"taskoutput":  {"task_id", "bash_id", "shell_id"},
	"bashoutput":  {"bash_id", "task_id", "shell_id"},
	"write_stdin": {"session_id"},
}

// launchNotices are what a starting call's result says before the id.
var launchNotices = []string{"in background with ID: ", "with session ID "}

// launchHead bounds how much of a result's raw text is searched for the
// notice: it opens the result.
const launchHead = 1024

// backgroundHints returns, for each result of c that reads a background
// task's output, the hint of the call that started the task, when c holds
// it; nil when there is none.
func backgroundHints(c *wire.Conversation) map[*wire.ToolResult]compress.Hint {
	var readers []int
	for i := range c.Results {
		if _, ok := backgroundReaders[strings.ToLower(c.Results[i].ToolName)]; ok {
			readers = append(readers, i)
		}
	}
	if len(readers) == 0 {
		return nil
	}
	started := map[string]compress.Hint{} // task id → the starting call's hint
	for i := range c.Results {
		r := &c.Results[i]
		if r.Args == "" || len(r.Texts) == 0 {
			continue
		}
		if _, reader := backgroundReaders[strings.ToLower(r.ToolName)]; reader {
			continue
		}
		if id := launchedID(r.Texts[0].Raw); id != "" {
			started[id] = compress.Hint{ToolName: r.ToolName, Args: r.Args}
		}
	}
	out := map[*wire.ToolResult]compress.Hint{}
	for _, i := range readers {
		r := &c.Results[i]
		args := wire.ArgsObject(r.Args)
		for _, key := range backgroundReaders[strings.ToLower(r.ToolName)] {
			v := args.Get(key)
			if v.Type != gjson.String && v.Type != gjson.Number {
				continue
			}
			if h, ok := started[v.String()]; ok {
				out[r] = h
			}
			break
		}
	}
	return out
}

// launchedID is the task id a result's raw JSON string literal names after
// a launch notice near its start, or "".
func launchedID(raw string) string {
	if len(raw) > launchHead {
		raw = raw[:launchHead]
	}
	for _, n := range launchNotices {
		i := strings.Index(raw, n)
		if i < 0 {
			continue
		}
		id := raw[i+len(n):]
		j := 0
		for j < len(id) && j < 64 && isIDByte(id[j]) {
			j++
		}
		if j > 0 {
			return id[:j]
		}
	}
	return ""
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
