package testenv

import (
	"encoding/json"
	"strings"
)

// answerPieces is the canned answer, split the way a model streams it. It mixes 2-, 3- and 4-byte
// UTF-8 so a body cut inside a rune is caught by anyone who decodes it.
var answerPieces = []string{"Héllo", " wörld", "!", " 中文", " 🙂", " This", " is", " the", " stand", "-in", " answer", "."}

// AnswerText is the whole canned answer the fake upstream gives by default.
var AnswerText = strings.Join(answerPieces, "")

const (
	cannedCreated = 1767225600 // 2026-01-01T00:00:00Z
	openAIID      = "chatcmpl-standin0001"
	anthropicID   = "msg_01StandinStandinStandin"
	fingerprint   = "fp_standin01"
)

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only fixed shapes are marshalled here
	}
	return b
}

func errorJSON(typ, msg string) []byte {
	type apiError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	return mustJSON(struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: typ}})
}

type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func newOpenAIUsage(prompt int) openAIUsage {
	return openAIUsage{PromptTokens: prompt, CompletionTokens: len(answerPieces), TotalTokens: prompt + len(answerPieces)}
}

func openAICompletion(model string, promptTokens int) []byte {
	type message struct {
		Role    string  `json:"role"`
		Content string  `json:"content"`
		Refusal *string `json:"refusal"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Message      message `json:"message"`
		Logprobs     *string `json:"logprobs"`
		FinishReason string  `json:"finish_reason"`
	}
	return mustJSON(struct {
		ID                string      `json:"id"`
		Object            string      `json:"object"`
		Created           int64       `json:"created"`
		Model             string      `json:"model"`
		Choices           []choice    `json:"choices"`
		Usage             openAIUsage `json:"usage"`
		SystemFingerprint string      `json:"system_fingerprint"`
	}{
		ID: openAIID, Object: "chat.completion", Created: cannedCreated, Model: model,
		Choices:           []choice{{Message: message{Role: "assistant", Content: AnswerText}, FinishReason: "stop"}},
		Usage:             newOpenAIUsage(promptTokens),
		SystemFingerprint: fingerprint,
	})
}

// openAIStream returns chat.completion.chunk events: the role chunk, one chunk per answer piece, the
// finish_reason chunk, the usage chunk when asked for, and data: [DONE].
func openAIStream(model string, promptTokens int, includeUsage bool) [][]byte {
	type delta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Delta        delta   `json:"delta"`
		Logprobs     *string `json:"logprobs"`
		FinishReason *string `json:"finish_reason"`
	}
	type chunk struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		SystemFingerprint string       `json:"system_fingerprint"`
		Choices           []choice     `json:"choices"`
		Usage             *openAIUsage `json:"usage"`
	}
	event := func(c chunk) []byte {
		c.ID, c.Object, c.Created, c.Model, c.SystemFingerprint = openAIID, "chat.completion.chunk", cannedCreated, model, fingerprint
		if c.Choices == nil {
			c.Choices = []choice{}
		}
		return []byte("data: " + string(mustJSON(c)) + "\n\n")
	}
	empty := ""
	events := [][]byte{event(chunk{Choices: []choice{{Delta: delta{Role: "assistant", Content: &empty}}}})}
	for _, p := range answerPieces {
		events = append(events, event(chunk{Choices: []choice{{Delta: delta{Content: &p}}}}))
	}
	stop := "stop"
	events = append(events, event(chunk{Choices: []choice{{FinishReason: &stop}}}))
	if includeUsage {
		u := newOpenAIUsage(promptTokens)
		events = append(events, event(chunk{Usage: &u}))
	}
	return append(events, []byte("data: [DONE]\n\n"))
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens"`
}

type anthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicMsg struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []anthropicBlock `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        anthropicUsage   `json:"usage"`
}

func anthropicMessage(model string, promptTokens int) []byte {
	stop := "end_turn"
	return mustJSON(anthropicMsg{
		ID: anthropicID, Type: "message", Role: "assistant", Model: model,
		Content:    []anthropicBlock{{Type: "text", Text: AnswerText}},
		StopReason: &stop,
		Usage:      anthropicUsage{InputTokens: promptTokens, OutputTokens: len(answerPieces)},
	})
}

// anthropicStream returns Messages API events: message_start, content_block_start, ping, one
// content_block_delta per answer piece (with a second ping half-way), content_block_stop,
// message_delta and message_stop.
func anthropicStream(model string, promptTokens int) [][]byte {
	event := func(name string, data any) []byte {
		var b []byte
		if s, ok := data.(string); ok {
			b = []byte(s)
		} else {
			b = mustJSON(data)
		}
		return []byte("event: " + name + "\ndata: " + string(b) + "\n\n")
	}
	type textDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type blockDelta struct {
		Type  string    `json:"type"`
		Index int       `json:"index"`
		Delta textDelta `json:"delta"`
	}
	// Anthropic really sends the ping with a space after the colon.
	const ping = `{"type": "ping"}`
	events := [][]byte{
		event("message_start", struct {
			Type    string       `json:"type"`
			Message anthropicMsg `json:"message"`
		}{"message_start", anthropicMsg{
			ID: anthropicID, Type: "message", Role: "assistant", Model: model,
			Content: []anthropicBlock{},
			Usage:   anthropicUsage{InputTokens: promptTokens, OutputTokens: 1},
		}}),
		event("content_block_start", struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock anthropicBlock `json:"content_block"`
		}{"content_block_start", 0, anthropicBlock{Type: "text"}}),
		event("ping", ping),
	}
	for i, p := range answerPieces {
		if i == len(answerPieces)/2 {
			events = append(events, event("ping", ping))
		}
		events = append(events, event("content_block_delta", blockDelta{"content_block_delta", 0, textDelta{"text_delta", p}}))
	}
	stop := "end_turn"
	events = append(events,
		event("content_block_stop", `{"type":"content_block_stop","index":0}`),
		event("message_delta", struct {
			Type  string `json:"type"`
			Delta struct {
				StopReason   *string `json:"stop_reason"`
				StopSequence *string `json:"stop_sequence"`
			} `json:"delta"`
			Usage anthropicUsage `json:"usage"`
		}{Type: "message_delta", Delta: struct {
			StopReason   *string `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
		}{StopReason: &stop}, Usage: anthropicUsage{OutputTokens: len(answerPieces)}}),
		event("message_stop", `{"type":"message_stop"}`),
	)
	return events
}
