package usage

// maxKey is the longest key the tokenizer remembers; longer keys are never
// one it looks for.
const maxKey = 16

// maxFrames is how many enclosing containers the tokenizer remembers. Usage
// objects sit at most two containers deep; deeper nesting is only counted,
// so a hostile answer costs no memory (depth is an int).
const maxFrames = 4

// frame is one open container.
type frame struct {
	key   string // the key it is the value of ("" in an array or at the root)
	array bool
}

// tokenizer follows just enough JSON to know, at each '{', which key it is
// the value of and what encloses it. It accepts anything: on bytes that are
// not JSON it keeps counting braces outside strings and never fails.
type tokenizer struct {
	depth  int
	frames [maxFrames]frame

	inStr, esc bool
	str        [maxKey]byte
	strLen     int
	strLong    bool
	afterStr   bool   // the last token was a string (a key if ':' follows)
	key        string // a key whose value comes next
	keyed      bool

	capturing bool
	capDepth  int
	capture   []byte
	overflow  bool // a usage object exceeded the cap (counted by the Reader)
}

func (t *tokenizer) reset() {
	capture := t.capture[:0]
	*t = tokenizer{capture: capture}
}

// step consumes one byte. It returns the bytes of a usage object when one
// closes; the slice is valid until the next step.
func (t *tokenizer) step(c byte, limit int) []byte {
	if t.capturing {
		if len(t.capture) < limit {
			t.capture = append(t.capture, c)
		} else {
			t.capturing = false
			t.overflow = true
			t.capture = t.capture[:0]
		}
	}
	if t.inStr {
		switch {
		case t.esc:
			t.esc = false
		case c == '\\':
			t.esc = true
		case c == '"':
			t.inStr = false
			t.afterStr = true
		default:
			if t.strLen < maxKey {
				t.str[t.strLen] = c
				t.strLen++
			} else {
				t.strLong = true
			}
		}
		return nil
	}
	switch c {
	case ' ', '\t', '\n', '\r':
		return nil
	case '"':
		t.inStr, t.strLen, t.strLong, t.keyed = true, 0, false, false
		return nil
	case ':':
		if t.afterStr && !t.strLong {
			t.key, t.keyed = string(t.str[:t.strLen]), true
		}
		t.afterStr = false
		return nil
	case '{', '[':
		key := ""
		if t.keyed {
			key = t.key
		}
		if c == '{' && !t.capturing && t.wanted(key) {
			t.capturing, t.capDepth = true, t.depth
			t.capture = append(t.capture[:0], '{')
		}
		if t.depth < maxFrames {
			t.frames[t.depth] = frame{key: key, array: c == '['}
		}
		t.depth++
		t.keyed, t.afterStr = false, false
		return nil
	case '}', ']':
		t.keyed, t.afterStr = false, false
		if t.depth > 0 {
			t.depth--
		}
		if t.capturing && t.depth == t.capDepth {
			t.capturing = false
			return t.capture
		}
		return nil
	}
	t.keyed, t.afterStr = false, false
	return nil
}

// wanted says whether an object that is the value of key, opening at the
// current depth, is a usage object: top-level `usage` (every JSON answer,
// OpenAI's usage chunk, Anthropic's message_delta, Bedrock's metadata
// event), `usage` inside Anthropic's message_start `message` or a
// Responses event's `response`, and Gemini's `usageMetadata` at the top of
// a document or of an element of its JSON array stream.
func (t *tokenizer) wanted(key string) bool {
	switch key {
	case "usage":
		switch t.depth {
		case 1:
			return !t.frames[0].array
		case 2:
			p := t.frames[1].key
			return !t.frames[0].array && !t.frames[1].array && (p == "message" || p == "response")
		}
	case "usageMetadata":
		switch t.depth {
		case 1:
			return !t.frames[0].array
		case 2:
			return t.frames[0].array && !t.frames[1].array
		}
	}
	return false
}
