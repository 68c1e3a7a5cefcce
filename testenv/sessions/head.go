package sessions

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Head is a real agent's request head: its system prompt and tool
// definitions in both shapes. A production agent sends 20–30 KB of them
// on every request; many recorded sessions carry only a stub (a text-action
// agent's short prompt, a transcript that records no head at all), which
// would make a window look emptier and a cache read cheaper than they are.
type Head struct {
	Agent       string          `json:"agent"`
	System      string          `json:"system"`
	Tools       json.RawMessage `json:"tools"`
	OpenAITools json.RawMessage `json:"openai_tools"`
}

// LoadHead reads a head file (testenv/sessions/heads).
func LoadHead(path string) (*Head, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var h Head
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if h.System == "" || !gjson.ValidBytes(h.Tools) || !gjson.ValidBytes(h.OpenAITools) {
		return nil, fmt.Errorf("%s: a head needs system, tools and openai_tools", path)
	}
	return &h, nil
}

// StubHeadBytes: a session whose own system prompt and tools are smaller
// than this gets the realistic head (Apply).
const StubHeadBytes = 8 << 10

// Apply gives a session record with a stub head the realistic one: its
// system prompt goes first, the session's own after it, and its tools
// first, less those the session defines itself (the session's win). A
// record with a head of its own of StubHeadBytes or more is returned as
// it is.
func (h *Head) Apply(rec []byte) ([]byte, error) {
	r := gjson.ParseBytes(rec)
	own := r.Get("system").String()
	if len(own)+len(r.Get("tools").Raw) >= StubHeadBytes {
		return rec, nil
	}
	system := h.System
	if strings.TrimSpace(own) != "" {
		system += "\n\n" + own
	}
	out, err := sjson.SetBytes(rec, "system", system)
	if err != nil {
		return rec, err
	}
	for _, k := range []struct {
		key, name string
		head      json.RawMessage
	}{{"tools", "name", h.Tools}, {"openai_tools", "function.name", h.OpenAITools}} {
		mine := map[string]bool{}
		r.Get(k.key).ForEach(func(_, t gjson.Result) bool {
			mine[t.Get(k.name).String()] = true
			return true
		})
		var list []string
		gjson.ParseBytes(k.head).ForEach(func(_, t gjson.Result) bool {
			if !mine[t.Get(k.name).String()] {
				list = append(list, t.Raw)
			}
			return true
		})
		r.Get(k.key).ForEach(func(_, t gjson.Result) bool {
			list = append(list, t.Raw)
			return true
		})
		if out, err = sjson.SetRawBytes(out, k.key, []byte("["+strings.Join(list, ",")+"]")); err != nil {
			return rec, err
		}
	}
	// The OpenAI shape carries the system prompt as its first message.
	if first := gjson.GetBytes(out, "openai_messages.0"); first.Get("role").String() == "system" {
		out, err = sjson.SetBytes(out, "openai_messages.0.content", system)
	} else if gjson.GetBytes(out, "openai_messages").IsArray() {
		msgs := gjson.GetBytes(out, "openai_messages").Raw
		sys, _ := json.Marshal(map[string]string{"role": "system", "content": system})
		out, err = sjson.SetRawBytes(out, "openai_messages", []byte("["+string(sys)+","+strings.TrimPrefix(msgs, "[")))
	}
	if err != nil {
		return rec, err
	}
	return out, nil
}
