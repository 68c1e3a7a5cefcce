// Package history rewrites old tool exchanges of a long conversation into
// one-line summaries (tool-history tiers): the system prompt and the task
// stay, the recent exchanges stay byte-identical, older results become
// "[Earlier: …]" lines that keep their error lines verbatim and point to the
// original in the shadow store. It acts only when the request nears the
// model's context window, and moves the line between old and recent in
// large steps, so consecutive requests share their rewritten prefix and the
// provider's prompt cache keeps working between steps.
package history

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Category is what a tool call did, which decides how its result is
// summarised.
type Category string

// The categories of seed 003's tiers.
const (
	Read     Category = "read"     // file reads: note what was read
	Write    Category = "write"    // edits and writes: note what changed
	Terminal Category = "terminal" // commands: keep failures, summarise successes
	Search   Category = "search"   // grep, glob, semantic search: note the query
	Other    Category = "other"
)

// toolCategories maps the tool names agents send to the model. Sources, as
// read in 2026: Claude Code's tools reference (code.claude.com/docs/en/tools-reference);
// OpenAI Codex CLI's codex-rs/core/src/tools/spec.rs; OpenClaw's
// src/agents/tool-policy.ts; GitHub Copilot Chat's ToolName enum
// (microsoft/vscode-copilot-chat, src/extension/tools/common/toolNames.ts);
// Cline's src/shared/tools.ts; OpenCode's packages/opencode/src/tool;
// SWE-agent's tools/ bundles (windowed, search, edit_anthropic) and
// OpenHands' CodeActAgent tools (execute_bash, str_replace_editor,
// execute_ipython_cell). Names are matched case-sensitively first, then
// lower-cased.
var toolCategories = map[string]Category{
	// Claude Code
	"Read": Read, "NotebookRead": Read, "LS": Search, "Glob": Search, "Grep": Search,
	"Write": Write, "Edit": Write, "MultiEdit": Write, "NotebookEdit": Write,
	"Bash": Terminal, "BashOutput": Terminal, "PowerShell": Terminal, "KillShell": Terminal,
	"WebFetch": Read, "WebSearch": Search,
	// Codex
	"shell": Terminal, "shell_command": Terminal, "local_shell": Terminal, "exec_command": Terminal,
	"write_stdin": Terminal, "apply_patch": Write, "read_file": Read, "list_dir": Search, "grep_files": Search,
	// OpenClaw / pi
	"read": Read, "write": Write, "edit": Write, "exec": Terminal, "process": Terminal, "bash": Terminal,
	"grep": Search, "find": Search, "ls": Search, "web_fetch": Read, "web_search": Search,
	// Copilot Chat
	"create_file": Write, "replace_string_in_file": Write, "multi_replace_string_in_file": Write,
	"insert_edit_into_file": Write, "edit_notebook_file": Write, "run_in_terminal": Terminal,
	"get_terminal_output": Terminal, "grep_search": Search, "file_search": Search, "semantic_search": Search,
	"list_code_usages": Search, "fetch_webpage": Read, "get_errors": Terminal, "run_tests": Terminal,
	// Cline
	"write_to_file": Write, "replace_in_file": Write, "execute_command": Terminal, "search_files": Search,
	"list_files": Search, "list_code_definition_names": Search,
	// OpenCode
	"glob": Search, "list": Search, "patch": Write, "webfetch": Read,
	// SWE-agent
	"open": Read, "goto": Read, "scroll_up": Read, "scroll_down": Read, "create": Write, "insert": Write,
	"search_dir": Search, "search_file": Search, "find_file": Search,
	// OpenHands
	"execute_bash": Terminal, "execute_ipython_cell": Terminal,
}

// Categorize says what a call did, by the tool's name and, for tools that do
// several things or are unknown, by the shape of its arguments (args is the
// call's raw JSON; OpenAI's JSON-string arguments are decoded first).
func Categorize(name, args string) Category {
	obj := wire.ArgsObject(args)
	if i := strings.LastIndex(name, "__"); i >= 0 { // MCP: mcp__server__tool
		name = name[i+2:]
	}
	if name == "str_replace_editor" || name == "text_editor" || strings.HasPrefix(name, "str_replace_based_edit_tool") {
		// Anthropic's text editor tool: one tool, the command decides.
		switch obj.Get("command").String() {
		case "view":
			return Read
		case "":
			return Other
		}
		return Write
	}
	if c, ok := toolCategories[name]; ok {
		return c
	}
	if c, ok := toolCategories[strings.ToLower(name)]; ok {
		return c
	}
	return categoryByShape(obj)
}

// categoryByShape guesses from the arguments of an unknown tool: a
// command line runs something, a body next to a path writes it, a pattern
// searches, a path alone reads.
func categoryByShape(obj gjson.Result) Category {
	if !obj.IsObject() {
		return Other
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if obj.Get(k).Exists() {
				return true
			}
		}
		return false
	}
	switch {
	case has("command", "cmd", "commandLine", "script"):
		return Terminal
	case has("content", "file_text", "new_string", "new_str", "old_string", "old_str", "patch", "diff", "edits"):
		return Write
	case has("pattern", "query", "regex", "glob", "search"):
		return Search
	case has("file_path", "path", "filePath", "target_file", "file", "filename", "url"):
		return Read
	}
	return Other
}
