// Package sessions replays recorded agent sessions through a request
// rewrite and measures what a provider would see over the whole session:
// bytes sent, the largest request, how many turns fit a context window,
// prompt-cache cost, prefix breaks and tool pairing. A rewrite is judged
// here, at the level of a session, not one request at a time.
//
// A session is one JSON line holding its final request (every earlier
// request of an append-only conversation is a prefix of it):
// {session, model, system, tools, messages} as Anthropic Messages and
// {openai_messages, openai_tools} as OpenAI Chat.
package sessions

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Session is one recorded conversation.
type Session struct {
	Name string
	// Anthropic and OpenAI are the requests of every turn, in order: the
	// body the agent sent before each assistant turn.
	Anthropic [][]byte
	OpenAI    [][]byte
}

// Load reads a sessions file (one JSON object per line; gzipped when its
// name ends in .gz).
func Load(path string) ([]Session, error) {
	return LoadWith(path, nil)
}

// LoadWith is Load giving sessions with a stub head the realistic head h
// (nil: none).
func LoadWith(path string, h *Head) ([]Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	ss, err := ReadWith(r, h)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ss, nil
}

// LoadAll loads every file in turn (LoadWith) into one set. A session
// holds every turn's request, so a set's memory grows with the square of
// its sessions' lengths: replays of whole corpora stream them (Each).
func LoadAll(files []string, h *Head) ([]Session, error) {
	var out []Session
	err := Each(files, h, func(s Session) error {
		out = append(out, s)
		return nil
	})
	return out, err
}

// Each reads the sessions of every file in turn and calls fn on each, one
// session in memory at a time: the corpus's 400-odd sessions hold over
// 20 GB of requests together (a replay of all of them was killed for
// memory), the longest one a few hundred MB.
func Each(files []string, h *Head, fn func(Session) error) error {
	for _, path := range files {
		if err := eachIn(path, h, fn); err != nil {
			return err
		}
	}
	return nil
}

func eachIn(path string, h *Head, fn func(Session) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	if err := readEach(r, h, fn); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Read parses sessions from r.
func Read(r io.Reader) ([]Session, error) {
	return ReadWith(r, nil)
}

// ReadWith is Read with a realistic head for stub heads (nil: none).
func ReadWith(r io.Reader, h *Head) ([]Session, error) {
	var out []Session
	err := readEach(r, h, func(s Session) error {
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readEach parses sessions from r and calls fn on each in turn.
func readEach(r io.Reader, h *Head, fn func(Session) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !gjson.ValidBytes(line) {
			return fmt.Errorf("line %d: not JSON", n)
		}
		if h != nil {
			var err error
			if line, err = h.Apply(line); err != nil {
				return fmt.Errorf("line %d: head: %w", n, err)
			}
		}
		s, err := parse(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return sc.Err()
}

// model and openAIModel name the sessions' requests: the window table
// knows them, so a replay at the model's own window is possible, and the
// benchmark can override the window for "a window the raw session
// overflows".
const (
	model       = "claude-sonnet-4-5"
	openAIModel = "gpt-4o"
)

func requestModel(d wire.Dialect) string {
	if d == wire.OpenAIChat {
		return openAIModel
	}
	return model
}

func parse(line []byte) (Session, error) {
	rec := gjson.ParseBytes(line)
	s := Session{Name: rec.Get("session").String()}
	msgs := rec.Get("messages").Array()
	for i, m := range msgs {
		// A request ends with each user message: the agent sends it and
		// the model answers.
		if m.Get("role").String() != "user" {
			continue
		}
		body := `{"model":"` + model + `","max_tokens":4096}`
		var err error
		if sys := rec.Get("system"); sys.Exists() {
			body, err = sjson.SetRaw(body, "system", sys.Raw)
		}
		if t := rec.Get("tools"); err == nil && t.IsArray() {
			body, err = sjson.SetRaw(body, "tools", t.Raw)
		}
		if err == nil {
			body, err = sjson.SetRaw(body, "messages", rawList(msgs[:i+1]))
		}
		if err != nil {
			return s, err
		}
		s.Anthropic = append(s.Anthropic, []byte(body))
	}
	om := rec.Get("openai_messages").Array()
	for i, m := range om {
		// A request ends where the assistant answers next (or the list
		// ends): after the last tool message or user text of a turn.
		if m.Get("role").String() == "assistant" || m.Get("role").String() == "system" {
			continue
		}
		if i+1 < len(om) && om[i+1].Get("role").String() != "assistant" {
			continue
		}
		body := `{"model":"` + openAIModel + `"}`
		var err error
		if t := rec.Get("openai_tools"); t.IsArray() {
			body, err = sjson.SetRaw(body, "tools", t.Raw)
		}
		if err == nil {
			body, err = sjson.SetRaw(body, "messages", rawList(om[:i+1]))
		}
		if err != nil {
			return s, err
		}
		s.OpenAI = append(s.OpenAI, []byte(body))
	}
	return s, nil
}

func rawList(items []gjson.Result) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it.Raw)
	}
	b.WriteByte(']')
	return b.String()
}
