package overflow

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// When an agent compacts its context it sends one request carrying the
// whole history and asking for a summary of it: the request most likely
// to overflow, and the one whose failure leaves the agent stuck. The
// recovery ladder recognises these requests so it can shrink them without
// offering expand_context (a summariser that reads originals back brings
// the overflow back).
//
// Compaction kinds, and how each announces itself:
//   - codex: a Responses request whose input holds an item of type
//     "compaction_trigger" (Codex CLI's in-body compaction signal);
//   - summary: a request whose last user message asks for a summary of the
//     conversation so far, as Claude Code's /compact and auto-compact
//     requests and OpenCode's summary request do. The phrases below are
//     short fragments of those instructions, matched case-insensitively.
const (
	CompactionCodex   = "codex"
	CompactionSummary = "summary"
)

// summaryMarkers are lower-case fragments of agents' compaction
// instructions.
var summaryMarkers = []string{
	"detailed summary of the conversation so far",  // Claude Code /compact
	"summary of the conversation so far",           // Claude Code (shorter wordings)
	"prompt for continuing our conversation above", // OpenCode compaction
	"summary of our conversation above",            // OpenCode (earlier releases)
	"summarize the conversation so far",            // generic
}

// maxInstructionBytes bounds how much of the last user message is searched.
const maxInstructionBytes = 64 << 10

// CompactionKind says whether body (a request of dialect d) is an agent's
// compaction request, and which kind: "" when it is not.
func CompactionKind(d wire.Dialect, body []byte) string {
	if !jsonsafe.Valid(body) {
		return ""
	}
	var list gjson.Result
	switch d {
	case wire.OpenAIResponses:
		if bytes.Contains(body, []byte("compaction_trigger")) {
			found := false
			gjson.GetBytes(body, "input").ForEach(func(_, item gjson.Result) bool {
				found = item.Get("type").String() == "compaction_trigger"
				return !found
			})
			if found {
				return CompactionCodex
			}
		}
		list = gjson.GetBytes(body, "input")
	case wire.OpenAIChat, wire.Anthropic:
		list = gjson.GetBytes(body, "messages")
	default:
		return ""
	}
	if !list.IsArray() {
		return ""
	}
	var last gjson.Result
	list.ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").String() == "user" {
			last = m
		}
		return true
	})
	if !last.Exists() {
		return ""
	}
	text := strings.ToLower(userText(last.Get("content")))
	for _, mk := range summaryMarkers {
		if strings.Contains(text, mk) {
			return CompactionSummary
		}
	}
	return ""
}

// userText is a message's text: a string, or its text / input_text parts,
// at most maxInstructionBytes.
func userText(content gjson.Result) string {
	if content.Type == gjson.String {
		return capString(content.Str)
	}
	var b strings.Builder
	content.ForEach(func(_, part gjson.Result) bool {
		switch part.Get("type").String() {
		case "text", "input_text":
			b.WriteString(part.Get("text").String())
			b.WriteByte('\n')
		}
		return b.Len() < maxInstructionBytes
	})
	return capString(b.String())
}

func capString(s string) string {
	if len(s) > maxInstructionBytes {
		return s[:maxInstructionBytes]
	}
	return s
}
