package wire

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// ErrNotJSON means the body is not a JSON object; callers pass it through.
var ErrNotJSON = errors.New("body is not a JSON object")

// ErrTooDeep means the body nests arrays and objects past
// jsonsafe.MaxDepth. Nothing recursive may look at it; callers pass it
// through byte-identical.
var ErrTooDeep = fmt.Errorf("body is not rewritable: %w", jsonsafe.ErrTooDeep)

// ErrDuplicateKey means an object in the body names a key twice. toolproc
// reads the first occurrence and providers the last (Python's json, Go's
// encoding/json), so a clamp of the first would let the second through
// unclamped: the body passes through, counted.
var ErrDuplicateKey = fmt.Errorf("body is not rewritable: %w", jsonsafe.ErrDuplicateKey)

// ContentForm is the JSON shape a tool result's content had on the wire.
// Rewrites keep it: a string stays a string, an array stays an array.
type ContentForm int

const (
	FormString ContentForm = iota // "content": "..."
	FormBlocks                    // "content": [{"type":"text","text":"..."}, ...]
	FormObject                    // Gemini: the result is the functionResponse.response object
)

// Span is the byte range of one raw JSON value inside the request body.
type Span struct {
	Start, End int
}

// TextBlock is one text value of a tool result: where its JSON string
// literal sits in the body, and its text, decoded only when a filter asks
// for it (most results are only measured, and MaxLen bounds them without
// decoding).
type TextBlock struct {
	Path string // gjson path, for reports and diagnostics
	Span Span   // the JSON string literal, quotes included
	// Raw is the literal, quotes included: a view into the body, or the
	// literal an earlier filter of the same pipeline run wrote (SetText).
	Raw     string
	text    string
	decoded bool
	// owned: text is the decoding's own allocation (see OwnsText).
	owned bool
}

// NewTextBlock is a block holding text, as a filter or a test builds one.
func NewTextBlock(path string, at Span, text string) TextBlock {
	return TextBlock{Path: path, Span: at, Raw: string(QuoteString(text)), text: text, decoded: true}
}

// Text is the decoded text. Through a pointer (&r.Texts[i]) the decoding
// is done once.
func (t *TextBlock) Text() string {
	if !t.decoded {
		body := literalBody(t.Raw)
		t.text, t.decoded = jsonsafe.Unescape(body), true
		// Unescape returns its input when there is nothing to decode, and
		// otherwise a new buffer of len(body)+8 bytes holding a shorter
		// text (every escape decodes to fewer bytes than it takes).
		n := len(t.text)
		t.owned = n < len(body) && len(body)+8 <= n+n/16+maxOwnedSlack
	}
	return t.text
}

// maxOwnedSlack is what OwnsText lets a short text's buffer exceed it by
// beyond a sixteenth.
const maxOwnedSlack = 64

// OwnsText says whether Text's string is a buffer of its own, at most a
// sixteenth larger than the text: the literal had escapes to decode, but
// not so many that the buffer (sized to the literal) is much larger than
// the text. A tool output escapes a line break every few dozen bytes, 2 to
// 4 % of it. Such a text may be kept as it is (shadow.PutOwned) once the
// request is done: a memory store counts its length against its cap, and
// holds at most a sixteenth more. Any other text may be a view of the
// request body, which a store must neither pin nor be handed, or hold a
// buffer up to six times its size (a literal of \u escapes). Call it after
// Text.
func (t *TextBlock) OwnsText() bool { return t.owned }

// MaxLen bounds the decoded text's size in bytes without decoding it: an
// escape never decodes to more bytes than it takes.
func (t *TextBlock) MaxLen() int {
	if t.decoded {
		return len(t.text)
	}
	return max(len(t.Raw)-2, 0)
}

// MaxLines bounds the decoded text's line count: a line break takes at
// least two bytes ("\n") in the literal.
func (t *TextBlock) MaxLines() int {
	if t.decoded {
		return strings.Count(t.text, "\n") + 1
	}
	return t.MaxLen()/2 + 1
}

// SetText makes the block hold text written by an earlier filter of the
// same run (pipeline edits are applied once, at the end).
func (t *TextBlock) SetText(text, raw string) {
	t.text, t.decoded, t.owned, t.Raw = text, true, false, raw
}

// JSONBlock is a tool result value that is JSON rather than text: Bedrock
// {"json": {...}} content and Gemini functionResponse.response. It must stay
// valid JSON of the same kind (an object stays an object).
type JSONBlock struct {
	Path string
	Span Span
	Raw  string
}

// ToolResult is one tool result, whatever the dialect.
type ToolResult struct {
	Ordinal     int    // position among the conversation's tool results
	Message     int    // index of the message (or input item) that holds it
	Path        string // gjson path of the result object
	CallID      string // tool_call_id / tool_use_id / call_id (never edited)
	ToolName    string // resolved from the matching call, "" when none matched
	Args        string // the matching call's arguments as raw JSON, "" when none matched
	CallMessage int    // index of the message holding the matching call, -1 when none
	TurnsAgo    int    // assistant turns after this result: 0 = the model has not answered it yet
	IsError     bool
	Form        ContentForm
	Texts       []TextBlock
	JSON        []JSONBlock
	NonText     int // image, document, ... blocks: kept as they are
}

// TextBytes is the UTF-8 size of all text blocks.
func (r *ToolResult) TextBytes() int {
	n := 0
	for i := range r.Texts {
		n += len(r.Texts[i].Text())
	}
	return n
}

// ToolCall is one tool call made by the assistant earlier in the conversation.
type ToolCall struct {
	Message int
	ID      string
	Name    string
	Args    string // raw JSON (an object, or the JSON string OpenAI sends)
	// ArgsSpan is where Args sits in the body (the object, or the string
	// literal OpenAI sends), for filters that rewrite old call inputs.
	ArgsSpan Span
}

// Message is one message (or input item) of the conversation: where its JSON
// sits in the body, its role, and what a provider does not count of it.
type Message struct {
	Span Span
	Role string
	// Thinking is the bytes of thinking and redacted_thinking blocks in an
	// assistant message (Anthropic): the API drops them from the context of
	// every turn but the current one (docs.anthropic.com/en/docs/build-with-claude/extended-thinking).
	Thinking int
	// Prompt: a user message carrying the user's own words (not only tool
	// results); it starts a new turn.
	Prompt bool
	// Assistant: the message is model output (an assistant or model
	// message, a function_call or reasoning item).
	Assistant bool
}

// Conversation is the tool-exchange model the filters share.
type Conversation struct {
	Dialect    Dialect
	Model      string
	Stream     bool
	Messages   int    // messages (or input items) in the conversation
	ToolsPath  string // gjson path of the tools list, "" when the request has none
	SystemPath string // gjson path of the system prompt, "" when none
	Calls      []ToolCall
	Results    []ToolResult
	// Msgs describes every message (or input item) in order; len(Msgs) ==
	// Messages.
	Msgs []Message
	// BodyBytes is the size of the request body the conversation came from.
	BodyBytes int
	// Body is that request body, which every Span points into (read only).
	Body []byte
	// root is the body's top-level value; getter answers paths from its
	// members (top), built on first use.
	root   node
	getter func(string) gjson.Result
	// blocks indexes the text and JSON blocks by where they start
	// (BlocksByStart), built on first use.
	blocks map[int]BlockRef
	// blockSpans are the same blocks' spans in body order.
	blockSpans []Span
	// assistantAt lists the message indexes that start an assistant turn.
	assistantAt   []int
	lastAssistant int
}

// eachMessage walks a conversation list in order, marking the assistant
// turns (messages whose role is assistantRole) before fn sees them, and
// records how many messages there are.
func (c *Conversation) eachMessage(list node, assistantRole string, fn func(mi int, role string, msg node)) {
	mi := -1
	list.ForEach(func(_, msg node) bool {
		mi++
		role := msg.Get("role").String()
		c.addMsg(msg, role)
		if role == assistantRole {
			c.assistantTurn(mi)
		}
		fn(mi, role, msg)
		return true
	})
	c.Messages = mi + 1
}

// addMsg records one message of the conversation list. Thinking bytes and
// whether a user message is a prompt are filled in by the dialect.
func (c *Conversation) addMsg(msg node, role string) *Message {
	c.Msgs = append(c.Msgs, Message{Span: span(msg), Role: role})
	return &c.Msgs[len(c.Msgs)-1]
}

// ParseEndpoint is Parse plus the facts the path carries: for Gemini and
// Bedrock the model and streaming live in the URL, not the body.
func ParseEndpoint(ep Endpoint, body []byte) (*Conversation, error) {
	c, err := Parse(ep.Dialect, body)
	if err != nil {
		return nil, err
	}
	if c.Model == "" {
		c.Model = ep.Model
	}
	c.Stream = c.Stream || ep.Stream
	return c, nil
}

// Parse builds the Conversation for body in one pass over the raw bytes. It
// never unmarshals the whole body: unknown fields are simply not looked at.
func Parse(d Dialect, body []byte) (*Conversation, error) {
	// The check that accepts the body also records where its messages,
	// their parts and their long strings end (four levels: body, list,
	// message, parts, part), so the walk below reads the structure only.
	ends := make(map[int]int, 64)
	switch err := jsonsafe.Check(body, jsonsafe.Options{DuplicateKeys: true, Ends: ends, EndsDepth: 4, Literals: checkedLiterals}); {
	case errors.Is(err, jsonsafe.ErrTooDeep):
		return nil, ErrTooDeep
	case errors.Is(err, jsonsafe.ErrDuplicateKey):
		return nil, ErrDuplicateKey
	case err != nil:
		return nil, ErrNotJSON
	}
	root := rootNode(body)
	root.ends = ends
	root = indexed(root)
	if !root.IsObject() {
		return nil, ErrNotJSON
	}
	c := &Conversation{
		root:          root,
		BodyBytes:     len(body),
		Body:          body,
		Dialect:       d,
		Model:         root.Get("model").String(),
		Stream:        root.Get("stream").Bool(),
		lastAssistant: -2,
	}
	switch d {
	case OpenAIChat:
		parseOpenAIChat(root, c)
	case Anthropic:
		parseAnthropic(root, c)
	case OpenAIResponses:
		parseOpenAIResponses(root, c)
	case Gemini:
		parseGemini(root, c)
	case Bedrock:
		parseBedrock(root, c)
	default:
		return nil, fmt.Errorf("parse: unknown dialect %q", d)
	}
	c.link()
	return c, nil
}

// link pairs every result with its call (by id; the latest call with that id
// before the result wins) and computes how old each result is. It is linear
// in calls + results (review finding 9: a scan of every call and every
// assistant turn per result made 80,000 small pairs cost 33 s of CPU).
// Calls and results are both in message order, so one forward merge finds
// each result's latest earlier call, and assistantAt (ascending) gives the
// turns after a result by a moving cursor.
func (c *Conversation) link() {
	latest := make(map[string]int, len(c.Calls)) // call id → index in c.Calls
	next := 0                                    // first call not yet in latest
	turn := 0                                    // first assistant turn after the result's message
	for i := range c.Results {
		r := &c.Results[i]
		r.CallMessage = -1
		for next < len(c.Calls) && c.Calls[next].Message <= r.Message {
			latest[c.Calls[next].ID] = next
			next++
		}
		if j, ok := latest[r.CallID]; ok {
			call := c.Calls[j]
			r.CallMessage, r.Args = call.Message, call.Args
			if r.ToolName == "" {
				r.ToolName = call.Name
			}
		}
		for turn < len(c.assistantAt) && c.assistantAt[turn] <= r.Message {
			turn++
		}
		r.TurnsAgo = len(c.assistantAt) - turn
	}
}

// assistantTurn records that message mi is assistant output; consecutive
// assistant messages or items form one turn.
func (c *Conversation) assistantTurn(mi int) {
	if mi < len(c.Msgs) {
		c.Msgs[mi].Assistant = true
	}
	if n := len(c.assistantAt); n > 0 && c.lastAssistant == mi-1 {
		c.lastAssistant = mi
		return
	}
	c.assistantAt = append(c.assistantAt, mi)
	c.lastAssistant = mi
}

// top reads the body's top-level members, once.
func (c *Conversation) top() func(string) gjson.Result {
	if c.getter == nil {
		c.getter = topGetter(c.root)
	}
	return c.getter
}

// BlockRef names one text block (JSON < 0) or JSON block (Text < 0) of a
// result.
type BlockRef struct{ Result, Text, JSON int }

// BlocksByStart indexes every result's blocks by the body offset where
// they start.
func (c *Conversation) BlocksByStart() map[int]BlockRef {
	if c.blocks == nil {
		c.blocks = make(map[int]BlockRef)
		for i := range c.Results {
			for k, t := range c.Results[i].Texts {
				c.blocks[t.Span.Start] = BlockRef{Result: i, Text: k, JSON: -1}
				c.blockSpans = append(c.blockSpans, t.Span)
			}
			for k, j := range c.Results[i].JSON {
				c.blocks[j.Span.Start] = BlockRef{Result: i, Text: -1, JSON: k}
				c.blockSpans = append(c.blockSpans, j.Span)
			}
		}
		slices.SortFunc(c.blockSpans, func(a, b Span) int { return a.Start - b.Start })
	}
	return c.blocks
}

// InsideBlock reports whether s lies within a result's block without
// being all of it (a value inside a JSON block).
func (c *Conversation) InsideBlock(s Span) bool {
	c.BlocksByStart()
	k, _ := slices.BinarySearchFunc(c.blockSpans, s.Start, func(b Span, start int) int { return b.Start - start })
	// The block starting at or just before s.Start is the only candidate:
	// blocks do not overlap.
	for _, j := range []int{k - 1, k} {
		if j >= 0 && j < len(c.blockSpans) {
			if b := c.blockSpans[j]; b.Start <= s.Start && s.End <= b.End && b != s {
				return true
			}
		}
	}
	return false
}

// Absorb makes the block at ref hold what e writes over exactly its span,
// so that a later filter of the same run reads the new value (the body
// itself is spliced once, at the end). An edit of another span is ignored.
func (c *Conversation) Absorb(ref BlockRef, e Edit) {
	r := &c.Results[ref.Result]
	switch {
	case ref.Text >= 0 && r.Texts[ref.Text].Span == e.Span:
		// What the next parse of the spliced body would read: a byte of
		// e.Text that starts no rune is a U+FFFD in Raw, so a later
		// filter must see that too (FuzzFoldedEqualsSequential found a
		// text halved once folded, twice when parsed again).
		text := decodedText(e.Text)
		if !e.HasText {
			raw := e.Raw
			if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
				return
			}
			text = unquote(raw)
		}
		r.Texts[ref.Text].SetText(text, e.Raw)
	case ref.JSON >= 0 && r.JSON[ref.JSON].Span == e.Span:
		r.JSON[ref.JSON].Raw = e.Raw
	}
}

// CallByID returns the call with that id, or nil.
func (c *Conversation) CallByID(id string) *ToolCall {
	for i := len(c.Calls) - 1; i >= 0; i-- {
		if c.Calls[i].ID == id {
			return &c.Calls[i]
		}
	}
	return nil
}

// span returns where v's raw JSON sits in the body (nodes carry absolute
// offsets).
func span(v node) Span {
	return Span{Start: v.Index, End: v.Index + len(v.Raw)}
}

// gjsonSpan is span for a gjson value, which reports absolute offsets for
// values reached by ForEach from the root.
func gjsonSpan(v gjson.Result) Span {
	return Span{Start: v.Index, End: v.Index + len(v.Raw)}
}

// textBlock keeps the literal; its text is decoded when first asked for.
func textBlock(path string, v node) TextBlock {
	return TextBlock{Path: path, Span: span(v), Raw: v.Raw}
}

func jsonBlock(path string, v node) JSONBlock {
	return JSONBlock{Path: path, Span: span(v), Raw: v.Raw}
}

// pathIf returns key when root has it.
func pathIf(root node, keys ...string) string {
	for _, k := range keys {
		if root.Get(k).Exists() {
			return k
		}
	}
	return ""
}

// gjsonPathIf is pathIf for a gjson value.
func gjsonPathIf(root gjson.Result, keys ...string) string {
	for _, k := range keys {
		if root.Get(k).Exists() {
			return k
		}
	}
	return ""
}

// HeadBytes is the size of the prompt outside the message list: the tools
// and a system prompt held in its own field, the part every cached prefix
// starts with. Request parameters (stream, max_tokens, temperature,
// metadata) are not counted: they are no prompt, and a client that
// streams one request and not the next must see the same estimate for the
// same conversation.
func (c *Conversation) HeadBytes() int {
	n := 0
	for _, p := range []string{c.ToolsPath, c.SystemPath} {
		if p == "" || inList(p) {
			continue
		}
		n += len(c.top()(p).Raw)
	}
	return n
}

// inList: a system prompt that is one of the messages (Chat's system
// role, a Responses developer item) is counted with them.
func inList(path string) bool {
	for _, l := range []string{"messages.", "input.", "contents."} {
		if strings.HasPrefix(path, l) {
			return true
		}
	}
	return false
}
