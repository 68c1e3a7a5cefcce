package compress

import (
	"slices"
	"strings"
)

// Why skip_tools exists: an agent edits a file by quoting what it read
// ("old_string" must match the file exactly). A compressed read leaves the
// model quoting lines it never saw, the edit fails, and the agent retries in
// a loop. Operators therefore name whole categories of tools to leave alone,
// and a category has to cover every agent they may front, because the same
// gateway sees Claude Code, Codex, OpenClaw and Copilot traffic.
//
// The names below are the ones each agent sends to the model as the tool's
// name (not display names or internal ids). Sources, as read in 2026:
//
//   - Claude Code: the tools reference at code.claude.com/docs/en/tools-reference
//     (Read, Write, Edit, Glob, Grep, Bash, NotebookEdit; PowerShell is its
//     Windows shell tool in recent releases) and the tool list of its
//     published system prompts (MultiEdit, NotebookRead, LS, BashOutput),
//     which older releases still send.
//   - OpenAI Codex CLI: codex-rs/core/src/tools/spec.rs and
//     handlers/apply_patch.rs (shell, shell_command, local_shell,
//     exec_command, write_stdin, apply_patch, read_file, list_dir,
//     grep_files).
//   - OpenClaw: src/agents/tool-policy.ts, the groups group:fs (read, write,
//     edit, apply_patch) and group:runtime (exec, process), with bash as an
//     alias of exec; grep, find and ls come from the pi coding-agent tool set
//     it builds on.
//   - GitHub Copilot Chat: src/extension/tools/common/toolNames.ts in
//     microsoft/vscode-copilot-chat, the ToolName enum (the names the model
//     sees, not the copilot_* ids VS Code registers them under).
//
// Anthropic's text editor tool (str_replace_based_edit_tool) and its
// OpenHands and SWE-agent counterpart str_replace_editor view and edit
// under one name, so no category holds them: skipping them would skip
// every view, which on recorded OpenHands sessions costs a fifth of the
// turns that fit a window (make bench-sessions: 2.29x against 1.83x). A
// compressed view names the omitted line ranges, which the tool's
// view_range reads back. Operators who see edit retries name the tool in
// skip_tools.
//
// view_image (Codex) and the notebook-output readers are left out: their
// results are images or cell outputs, not file text an edit quotes.
var categoryTools = map[string][]string{
	"read": {
		"Read", "NotebookRead", // Claude Code
		"read_file", // Codex, Copilot
		"read",      // OpenClaw
	},
	"edit": {
		"Edit", "MultiEdit", "NotebookEdit", // Claude Code
		"apply_patch", // Codex, OpenClaw, Copilot
		"edit",        // OpenClaw
		"replace_string_in_file", "multi_replace_string_in_file",
		"insert_edit_into_file", "edit_notebook_file", // Copilot
	},
	"write": {
		"Write",       // Claude Code
		"write",       // OpenClaw
		"create_file", // Copilot
	},
	"bash": {
		"Bash", "BashOutput", "PowerShell", // Claude Code
		"shell", "shell_command", "local_shell", "exec_command", "write_stdin", // Codex
		"exec", "process", "bash", // OpenClaw
		"run_in_terminal", "get_terminal_output", // Copilot
	},
	// Listing tools sit with glob: both answer "which files are there".
	"glob": {
		"Glob", "LS", // Claude Code
		"list_dir",   // Codex, Copilot
		"find", "ls", // OpenClaw (pi)
		"file_search", // Copilot
	},
	"grep": {
		"Grep",        // Claude Code
		"grep_files",  // Codex
		"grep",        // OpenClaw (pi)
		"grep_search", // Copilot
	},
}

// SkipSet says which tool results are never compressed. The zero value skips
// nothing.
type SkipSet struct {
	names map[string]struct{}
}

// NewSkipSet builds a SkipSet from config entries. A category name (read,
// edit, write, bash, glob, grep; any case) stands for the tool names the
// popular coding agents use for it; any other entry is one exact tool name.
//
// Tool names match exactly, case and all: agents differ only by case at
// times ("Read" and "read" are different agents' tools, both listed under
// read). MCP tools are not unwrapped: "mcp__fs__read_file" belongs to an MCP
// server, whose read may be anything, so it is skipped only when named in
// full.
func NewSkipSet(entries []string) SkipSet {
	s := SkipSet{names: make(map[string]struct{})}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if tools, ok := categoryTools[strings.ToLower(e)]; ok {
			for _, t := range tools {
				s.names[t] = struct{}{}
			}
			continue
		}
		s.names[e] = struct{}{}
	}
	return s
}

// Skips reports whether results of toolName are to be left alone. A result
// whose tool is unknown (its call is not in the request) is left alone
// whenever anything is to be skipped: it may be a read whose exact bytes
// the next edit needs, and failing open here is what breaks the edit loop
// skip_tools exists to protect (review finding 12).
func (s SkipSet) Skips(toolName string) bool {
	if len(s.names) == 0 {
		return false
	}
	if toolName == "" {
		return true
	}
	_, ok := s.names[toolName]
	return ok
}

// Categories returns the category names NewSkipSet expands, sorted.
func Categories() []string {
	out := make([]string, 0, len(categoryTools))
	for c := range categoryTools {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// CategoryTools returns the tool names a category stands for, sorted, or nil
// for a name that is not a category. The slice is the caller's.
func CategoryTools(category string) []string {
	tools, ok := categoryTools[strings.ToLower(strings.TrimSpace(category))]
	if !ok {
		return nil
	}
	out := slices.Clone(tools)
	slices.Sort(out)
	return out
}
