package wire

import (
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// node is one JSON value of a request body that jsonsafe.Check already
// accepted: its kind, its raw bytes (a view into the body, never a copy)
// and where they start. Parse walks a body with nodes instead of gjson
// because a walk must not cost more than one pass over the bytes: gjson
// re-scans an object for every key asked of it and decodes every string it
// reaches, so a 1 MB request was read six times and every tool result was
// copied even when only its size mattered (issue 14). Here a string is
// skipped with one memchr-speed search per quote and decoded only when
// asked (TextBlock.Text).
//
// The method names follow gjson's on purpose: the dialect parsers read the
// same either way, on the bodies jsonsafe.Check accepts. The walker is
// also safe on its own, over bytes nobody checked (review round 3, U3):
// every node's Raw is a slice of the bytes it was read from, every loop
// moves forward at each step, nothing recurses (nesting costs a counter,
// never a stack frame) and each call reads the node's bytes at most once.
// What it reads from invalid bytes is unspecified, which is why the entry
// points still check first: a rewrite must never produce invalid JSON.
// FuzzNodeRaw feeds it raw bytes.
type node struct {
	Type  gjson.Type
	Raw   string
	Index int
	// members, when set, are an object's members read in the same pass
	// that found the object's end: asking it for keys costs no new scan.
	members []member
	// ends, when set, holds where the body's containers and long strings
	// end by where they start (absolute offsets), recorded by the check
	// that accepted the body: skipping one of them costs a lookup, not a
	// scan, so a walk reads the structure and never the tool outputs
	// (jsonsafe.Options.Ends).
	ends map[int]int
}

// member is one key (decoded) and its value.
type member struct {
	key string
	val node
}

// indexed returns obj with its members read (one pass over it).
func indexed(obj node) node {
	if !obj.IsObject() || obj.members != nil {
		return obj
	}
	n := objectAt(obj.Raw, 0, obj.Index, obj.ends)
	n.Index = obj.Index
	for k := range n.members {
		n.members[k].val.Index += obj.Index
	}
	return n
}

// objectAt reads the object starting at s[i] with its members, in one pass:
// each member's value is skipped once, never re-read to find the next key.
// Nested objects are only skipped (their members are read when asked).
func objectAt(s string, i, base int, ends map[int]int) node {
	start := i
	ms := make([]member, 0, 4)
	i = skipSpace(s, i+1)
	for i < len(s) && s[i] == '"' {
		end := stringEnd(s, i)
		key := unquote(s[i:end])
		i = skipColon(s, end)
		v := valueAt(s, i, base, ends)
		if !v.Exists() {
			break // unchecked bytes that end after a key
		}
		ms = append(ms, member{key: key, val: v})
		i = skipSpace(s, i+len(v.Raw))
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
	if i < len(s) {
		i++ // the closing brace
	}
	return node{Type: gjson.JSON, Raw: s[start:i], Index: start, members: ms, ends: ends}
}

// view is b as a string without a copy. The body is never written while
// a conversation over it lives (filters are byte-in, byte-out).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// rootNode is the node of a whole (checked) body.
// A checked body is one value between optional spaces, so the root's end
// is the last byte that is not a space: no scan.
func rootNode(body []byte) node {
	s := view(body)
	i := skipSpace(s, 0)
	if i >= len(s) {
		return node{}
	}
	end := len(s)
	for end > i && (s[end-1] == ' ' || s[end-1] == '\t' || s[end-1] == '\n' || s[end-1] == '\r') {
		end--
	}
	return node{Raw: s[i:end], Index: i, Type: typeAt(s[i])}
}

// valueAt reads the value starting at s[i] (no leading space); s starts
// at body offset base. Past the end of s there is no value.
func valueAt(s string, i, base int, ends map[int]int) node {
	if i >= len(s) {
		return node{}
	}
	end := skipValue(s, i, base, ends)
	return node{Raw: s[i:end], Index: i, ends: ends, Type: typeAt(s[i])}
}

// typeAt is the kind of the value whose first byte is c.
func typeAt(c byte) gjson.Type {
	switch c {
	case '"':
		return gjson.String
	case '{', '[':
		return gjson.JSON
	case 't':
		return gjson.True
	case 'f':
		return gjson.False
	case 'n':
		return gjson.Null
	}
	return gjson.Number
}

// skipValue returns the index just after the value starting at s[i]
// (i < len(s)): always past i, never past the end of s.
func skipValue(s string, i, base int, ends map[int]int) int {
	if ends != nil {
		if e, ok := ends[base+i]; ok && e-base > i && e-base <= len(s) {
			return e - base
		}
	}
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		return skipContainer(s, i)
	case 't', 'n':
		return min(i+4, len(s))
	case 'f':
		return min(i+5, len(s))
	}
	j := i + 1
	for j < len(s) {
		switch c := s[j]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
			j++
			continue
		}
		break
	}
	return j
}

// stringEnd returns the index just after the string whose opening quote
// is s[i], or len(s) when nothing closes it.
func stringEnd(s string, i int) int {
	return min(skipQuoted(s, i+1)+1, len(s))
}

// skipQuoted returns the index of the quote closing the string whose body
// starts at s[i]: the next quote not escaped by an odd run of backslashes;
// len(s) when there is none. Each backslash is counted for one quote only,
// so the search is linear.
func skipQuoted(s string, i int) int {
	for {
		k := strings.IndexByte(s[i:], '"')
		if k < 0 {
			return len(s)
		}
		q := i + k
		bs := 0
		for j := q - 1; j >= i && s[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// skipContainer returns the index just after the object or array at s[i],
// or len(s) when it does not close. Nesting is a counter, not recursion.
func skipContainer(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			i = skipQuoted(s, i+1)
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// skipColon skips the spaces, the colon and the spaces after an object
// key; on unchecked bytes a missing colon is not skipped over.
func skipColon(s string, i int) int {
	i = skipSpace(s, i)
	if i < len(s) && s[i] == ':' {
		i = skipSpace(s, i+1)
	}
	return i
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Exists reports whether the node was found.
func (n node) Exists() bool { return n.Raw != "" }

// IsObject and IsArray report the container kind.
func (n node) IsObject() bool { return n.Type == gjson.JSON && n.Raw != "" && n.Raw[0] == '{' }
func (n node) IsArray() bool  { return n.Type == gjson.JSON && n.Raw != "" && n.Raw[0] == '[' }

// String is the value as text: a string decoded, anything else as gjson
// would give it.
func (n node) String() string {
	switch n.Type {
	case gjson.String:
		return unquote(n.Raw)
	case gjson.True:
		return "true"
	case gjson.False:
		return "false"
	case gjson.Null:
		return ""
	}
	return n.Raw
}

// Bool follows gjson: true, a non-zero number, or a string that parses as
// a boolean.
func (n node) Bool() bool {
	switch n.Type {
	case gjson.True:
		return true
	case gjson.String:
		b, _ := strconv.ParseBool(strings.ToLower(n.String()))
		return b
	case gjson.Number:
		f, _ := strconv.ParseFloat(n.Raw, 64)
		return f != 0
	}
	return false
}

// Int follows gjson for the values requests carry.
func (n node) Int() int64 {
	switch n.Type {
	case gjson.True:
		return 1
	case gjson.String:
		v, _ := strconv.ParseInt(n.String(), 10, 64)
		return v
	case gjson.Number:
		if v, err := strconv.ParseInt(n.Raw, 10, 64); err == nil {
			return v
		}
		f, _ := strconv.ParseFloat(n.Raw, 64)
		return int64(f)
	}
	return 0
}

// ForEach calls fn for every member of an object (key, value) or element
// of an array (zero key, value), in order, until fn returns false.
func (n node) ForEach(fn func(key, value node) bool) {
	if n.Type != gjson.JSON || n.Raw == "" {
		return
	}
	s, base := n.Raw, n.Index
	object := s[0] == '{'
	i := skipSpace(s, 1)
	for i < len(s) && s[i] != '}' && s[i] != ']' {
		var key node
		if object {
			if s[i] != '"' {
				return // unchecked bytes: a member without a key
			}
			end := stringEnd(s, i)
			key = node{Type: gjson.String, Raw: s[i:end], Index: base + i}
			i = skipColon(s, end)
			if i >= len(s) {
				return
			}
		}
		var v node
		if !object && s[i] == '{' {
			// A list of objects (messages, content blocks, tool calls):
			// each is read once, members and end together.
			v = objectAt(s, i, base, n.ends)
			for k := range v.members {
				v.members[k].val.Index += base
			}
		} else {
			v = valueAt(s, i, base, n.ends)
		}
		i = skipSpace(s, i+len(v.Raw))
		v.Index += base
		if !fn(key, v) {
			return
		}
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
}

// Get follows a dotted path of object keys and array indexes; "#" counts
// an array's elements.
func (n node) Get(path string) node {
	for path != "" && n.Exists() {
		key, rest, _ := strings.Cut(path, ".")
		path = rest
		switch {
		case key == "#" && n.IsArray():
			count := 0
			n.ForEach(func(_, _ node) bool { count++; return true })
			return node{Type: gjson.Number, Raw: strconv.Itoa(count)}
		case n.IsObject():
			n = n.member(key)
		case n.IsArray():
			want, err := strconv.Atoi(key)
			if err != nil || want < 0 {
				return node{}
			}
			found, k := node{}, 0
			n.ForEach(func(_, v node) bool {
				if k == want {
					found = v
					return false
				}
				k++
				return true
			})
			n = found
		default:
			return node{}
		}
	}
	return n
}

// member is the value of key in an object: from its members when read,
// else by a walk that compares the raw key when it has no escapes and
// decodes it otherwise ("\u0063ontent" is "content").
func (n node) member(key string) node {
	if n.members != nil {
		for _, m := range n.members {
			if m.key == key {
				return m.val
			}
		}
		return node{}
	}
	var found node
	n.ForEach(func(k, v node) bool {
		raw := literalBody(k.Raw)
		if raw == key || strings.IndexByte(raw, '\\') >= 0 && unquote(k.Raw) == key {
			found = v
			return false
		}
		return true
	})
	return found
}

// unquote decodes a JSON string literal (quotes included) that the check
// accepted; without escapes it is a view, no copy.
func unquote(lit string) string { return jsonsafe.Unescape(literalBody(lit)) }

// literalBody is a string literal without its quotes. A literal read from
// unchecked bytes may have no closing quote (or be a lone opening one).
func literalBody(lit string) string {
	switch {
	case len(lit) >= 2 && lit[len(lit)-1] == '"':
		return lit[1 : len(lit)-1]
	case len(lit) >= 1:
		return lit[1:]
	}
	return ""
}
