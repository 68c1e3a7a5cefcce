package stream

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/wire"
)

// Tool calls: finding the call a fragment belongs to, holding fragments
// until a call can go out, and emitting calls one after another.

// onPieces emits what the XML scanner made of assistant text.
func (n *oaiChat) onPieces(pieces []xmlPiece) {
	for _, p := range pieces {
		switch p.Kind {
		case xmlText, xmlFinal:
			if p.Text != "" {
				n.emitText(string(wire.AppendString(nil, p.Text)))
			}
		case xmlCall:
			c := n.newCall()
			c.name = p.Name
			c.args.feed(p.Args)
			c.held = append(c.held, p.Args...)
			n.pump(false)
		}
	}
}

// onToolCall routes one upstream tool_calls entry to its call.
func (n *oaiChat) onToolCall(e gjson.Result) {
	if !e.IsObject() {
		return
	}
	c := n.resolve(e)
	if c.done {
		return // a fragment for a call already finished
	}
	fn := e.Get("function")
	if name := fn.Get("name"); name.Type == gjson.String && name.Str != "" && c.name == "" {
		c.name = name.Str
	}
	switch args := fn.Get("arguments"); {
	case c.args.closed:
		// The arguments are already a complete JSON value: anything more
		// would make them invalid (old Vercel SDKs even stop reading here).
	case args.Type == gjson.String:
		c.args.feed(args.Str)
		c.held = append(c.held, args.Str...)
	case args.IsObject() || args.IsArray():
		// Some servers send the arguments as a JSON value, not a string.
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(args.Raw)) == nil {
			c.args.feed(buf.String())
			c.held = append(c.held, buf.Bytes()...)
		}
	}
	n.pump(false)
}

// resolve finds the call an entry belongs to: by id, else by index, else
// the call touched last. Upstream indexes are keys only (they may start at
// 1, be -1, sparse, or missing); client indexes are assigned on emission.
func (n *oaiChat) resolve(e gjson.Result) *oaiCall {
	id := e.Get("id")
	idx := e.Get("index")
	hasIdx := idx.Type == gjson.Number
	i := idx.Int()
	if id.Type == gjson.String && id.Str != "" {
		if c := n.byID[id.Str]; c != nil {
			// The same id under a new index is a server reusing ids.
			if !(hasIdx && c.hasIdx && c.upIdx != i && n.byIndex[i] == nil) {
				if hasIdx {
					n.setIndex(i, c)
				}
				n.last = c
				return c
			}
		} else if c := n.byIndex[i]; hasIdx && c != nil && c.upID == "" {
			c.upID = id.Str // the id came after the first fragment
			n.setID(id.Str, c)
			n.last = c
			return c
		}
		c := n.newCall()
		c.upID = id.Str
		n.setID(id.Str, c)
		if hasIdx {
			c.upIdx, c.hasIdx = i, true
			n.setIndex(i, c)
		}
		n.last = c
		return c
	}
	if hasIdx {
		if c := n.byIndex[i]; c != nil {
			n.last = c
			return c
		}
		c := n.newCall()
		c.upIdx, c.hasIdx = i, true
		n.setIndex(i, c)
		n.last = c
		return c
	}
	// No id, no index (Google): the current call, unless this entry names
	// a new call after the current one completed.
	name := e.Get("function.name").Str
	if l := n.last; l != nil && (name == "" || l.name == "" || !l.args.closed) {
		return l
	}
	c := n.newCall()
	n.last = c
	return c
}

func (n *oaiChat) setID(id string, c *oaiCall) {
	if n.byID == nil {
		n.byID = map[string]*oaiCall{}
	}
	n.byID[id] = c
}

func (n *oaiChat) setIndex(i int64, c *oaiCall) {
	if n.byIndex == nil {
		n.byIndex = map[int64]*oaiCall{}
	}
	n.byIndex[i] = c
}

func (n *oaiChat) newCall() *oaiCall {
	c := &oaiCall{}
	n.calls = append(n.calls, c)
	return c
}

// pump emits what can be emitted, in order: the current call's start and
// held arguments; then, once its arguments are complete and a later call
// exists, the next call. With force (the end of the choice) every call is
// finished: nameless ones dropped, never-started ones with torn arguments
// dropped, argument-less ones given "{}".
func (n *oaiChat) pump(force bool) {
	for n.cursor < len(n.calls) {
		c := n.calls[n.cursor]
		if !c.started {
			if c.name == "" || (force && c.args.incomplete()) {
				if !force {
					return
				}
				if c.args.incomplete() {
					n.cut = true
				}
				c.done = true
				n.cursor++
				continue
			}
			n.startCall(c)
		}
		// Top-level scalar arguments ("12" sent as "1", "2") have valid
		// prefixes: they go out whole at the end (§3.6 rule 8).
		if len(c.held) > 0 && (force || !c.args.scalar) {
			n.emitArgs(c, c.held)
			c.held = c.held[:0]
		}
		if force {
			if !c.args.started {
				n.emitArgs(c, []byte("{}"))
			} else if c.args.incomplete() {
				n.cut = true
			}
		} else if !c.args.closed || n.cursor == len(n.calls)-1 {
			return
		}
		c.done = true
		n.cursor++
	}
}

func (n *oaiChat) startCall(c *oaiCall) {
	id := c.upID
	if id == "" || n.usedIDs[id] {
		id = n.opts.callID()
	}
	if n.usedIDs == nil {
		n.usedIDs = map[string]bool{}
	}
	n.usedIDs[id] = true
	c.out = n.nextOut
	n.nextOut++
	c.started = true
	b := make([]byte, 0, 96+len(id)+len(c.name))
	b = append(b, `{"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(c.out), 10)
	b = append(b, `,"id":`...)
	b = wire.AppendString(b, id)
	b = append(b, `,"type":"function","function":{"name":`...)
	b = wire.AppendString(b, c.name)
	b = append(b, `,"arguments":""}}]}`...)
	n.emitDelta(b)
}

func (n *oaiChat) emitArgs(c *oaiCall, frag []byte) {
	b := make([]byte, 0, 64+len(frag))
	b = append(b, `{"tool_calls":[{"index":`...)
	b = strconv.AppendInt(b, int64(c.out), 10)
	b = append(b, `,"function":{"arguments":`...)
	b = wire.AppendString(b, string(frag))
	b = append(b, `}}]}`...)
	n.emitDelta(b)
}

// oaiJSONShape follows the nesting of a JSON text fed in pieces, enough to
// tell a complete value from a torn one without parsing it.
type oaiJSONShape struct {
	depth   int
	inStr   bool
	esc     bool
	started bool // a non-space byte arrived
	closed  bool // the top-level object, array or string ended
	scalar  bool // the top level is a number, true, false or null (or junk)
}

func (s *oaiJSONShape) feed(text string) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.depth == 0 {
					s.closed = true
				}
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || s.closed {
			continue
		}
		if !s.started && c != '{' && c != '[' && c != '"' {
			s.scalar = true
		}
		s.started = true
		switch c {
		case '"':
			s.inStr = true
		case '{', '[':
			s.depth++
		case '}', ']':
			if s.depth--; s.depth <= 0 {
				s.depth = 0
				s.closed = true
			}
		}
	}
}

// incomplete: inside a string or an unclosed object/array.
func (s *oaiJSONShape) incomplete() bool { return s.inStr || s.depth > 0 }
