package compress

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
)

// JSON is compressed as a tree, so the output stays valid JSON. The byte
// budget is handed down the tree:
//
//   - a value that fits its share is copied as raw bytes from the input;
//   - an object keeps its members in order, as many as their minimal cost
//     allows, and shares the budget among them by water-filling (small
//     members get what they need, the large ones split the rest); members
//     that do not fit become one "…" member holding "[… 12 keys omitted …]";
//   - an array keeps whole items from the start while they fit, gives what is
//     left to the next item, and ends with "[… 97 items omitted …]";
//   - a string of many lines longer than its share (an issue's body, a log
//     a tool returns inside JSON) is compressed as the text it holds, by
//     the rules of its kind, and written back as a JSON string;
//   - another string longer than its share keeps its start and end around
//     "[… 1234 bytes omitted …]", never splitting an escape or a character;
//   - a container whose share is too small for anything becomes its marker.
//
// Keys, numbers and the kept parts of strings are input bytes. New
// containers are written in the input's layout: indented with its indent
// unit, single-line with ", " and ": " (Python's json.dumps), or compact.

type jsonStyle struct {
	indent string // "" = single line
	comma  string
	colon  string
}

// Minimal costs the allocation works with.
const (
	jsonMarkerCost = 28 // a quoted "[… 12 keys omitted …]"
	jsonMinValue   = 40 // below this a large value is not worth opening
)

func compressJSON(text string, target int) (string, int) {
	lead := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
	trail := len(text) - len(strings.TrimRight(text, " \t\r\n"))
	body := text[lead : len(text)-trail]
	w := jsonWriter{st: detectJSONStyle(body)}
	w.b.Grow(min(len(body), target+target/2))
	w.value(gjson.Parse(body), 0, max(target-lead-trail, jsonMinValue))
	return text[:lead] + w.b.String() + text[len(text)-trail:], w.omitted
}

func detectJSONStyle(body string) jsonStyle {
	head := body[:min(len(body), 4096)]
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		// The indent unit: the leading whitespace of the first indented line.
		rest := body[nl+1:]
		i := 0
		for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
			i++
		}
		unit := rest[:i]
		if unit == "" {
			unit = "  "
		}
		colon := ": "
		if !strings.Contains(head, "\": ") && strings.Contains(head, "\":") {
			colon = ":"
		}
		return jsonStyle{indent: unit, comma: ",", colon: colon}
	}
	if strings.Contains(head, "\": ") || strings.Contains(head, ", \"") || strings.Contains(head, ", {") {
		return jsonStyle{comma: ", ", colon: ": "}
	}
	return jsonStyle{comma: ",", colon: ":"}
}

type jsonWriter struct {
	b       strings.Builder
	st      jsonStyle
	omitted int
}

func (w *jsonWriter) newline(depth int) {
	if w.st.indent == "" {
		return
	}
	w.b.WriteByte('\n')
	for i := 0; i < depth; i++ {
		w.b.WriteString(w.st.indent)
	}
}

// lineCost is what newline(depth) writes.
func (w *jsonWriter) lineCost(depth int) int {
	if w.st.indent == "" {
		return 0
	}
	return 1 + depth*len(w.st.indent)
}

// value writes v within budget bytes where it can.
func (w *jsonWriter) value(v gjson.Result, depth, budget int) {
	if len(v.Raw) <= budget {
		w.b.WriteString(v.Raw)
		return
	}
	switch {
	case v.IsObject():
		w.object(v, depth, budget)
	case v.IsArray():
		w.array(v, depth, budget)
	case v.Type == gjson.String:
		w.str(v.Raw, budget)
	default:
		w.b.WriteString(v.Raw)
	}
}

// marker writes a marker string standing for n omitted keys or items.
func (w *jsonWriter) marker(n int, unit string) {
	w.b.WriteByte('"')
	w.b.WriteString(countMarker(n, unit))
	w.b.WriteByte('"')
	w.omitted += n
}

// jsonMember is an object member or array item as raw JSON: 32 bytes
// where a pair of gjson.Results takes 160, for arrays of a million small
// numbers (review round 3, N4).
type jsonMember struct {
	key string // empty for array items
	val string
}

// members returns the first most members of v and how many it has in
// all: object and array write a prefix of their members and only count
// the rest, and a member costs at least two bytes of output (a value and
// a comma), so most is half the budget and what is held is bounded by the
// budget, not the input.
func members(v gjson.Result, most int) ([]jsonMember, int) {
	var m []jsonMember
	n := 0
	v.ForEach(func(k, val gjson.Result) bool {
		if n < most {
			m = append(m, jsonMember{k.Raw, val.Raw})
		}
		n++
		return true
	})
	return m, n
}

// minCost is the least a member can be written in: small values whole,
// large ones as a marker or a shortened string.
func minCost(val string) int {
	return min(len(val), jsonMinValue)
}

func (w *jsonWriter) object(v gjson.Result, depth, budget int) {
	frame := 2 + w.lineCost(depth)
	over := len(w.st.comma) + len(w.st.colon) + w.lineCost(depth+1)
	avail := budget - frame
	// A member costs over, a key of two quotes and a value of a byte at
	// least: no more can be written than that fits in avail.
	m, total := members(v, max(avail, 0)/(over+3)+1)
	if budget < frame+jsonMinValue {
		w.marker(total, "keys")
		return
	}
	// How many members fit at their minimal cost, leaving room for the
	// marker member if some do not.
	k, used := 0, 0
	for k < len(m) {
		c := over + len(m[k].key) + minCost(m[k].val)
		reserve := 0
		if k+1 < total {
			reserve = over + 5 + jsonMarkerCost
		}
		if used+c+reserve > avail {
			break
		}
		used += c
		k++
	}
	if k < total {
		avail -= over + 5 + jsonMarkerCost
	}
	fixed := 0
	for _, mm := range m[:k] {
		fixed += over + len(mm.key)
	}
	shares := waterFill(m[:k], avail-fixed)
	w.b.WriteByte('{')
	for i, mm := range m[:k] {
		if i > 0 {
			w.b.WriteString(w.st.comma)
		}
		w.newline(depth + 1)
		w.b.WriteString(mm.key)
		w.b.WriteString(w.st.colon)
		w.value(gjson.Parse(mm.val), depth+1, shares[i])
	}
	if k < total {
		if k > 0 {
			w.b.WriteString(w.st.comma)
		}
		w.newline(depth + 1)
		w.b.WriteString(`"…"`)
		w.b.WriteString(w.st.colon)
		w.marker(total-k, "keys")
	}
	w.newline(depth)
	w.b.WriteByte('}')
}

// waterFill shares budget among values: each gets what it needs if that is
// below the level, the rest split the remainder evenly.
func waterFill(m []jsonMember, budget int) []int {
	shares := make([]int, len(m))
	order := make([]int, len(m))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(m[a].val) - len(m[b].val) })
	left := max(budget, 0)
	for n, i := range order {
		level := left / (len(order) - n)
		need := len(m[i].val)
		if need <= level {
			shares[i] = need
		} else {
			shares[i] = level
		}
		left -= shares[i]
	}
	return shares
}

func (w *jsonWriter) array(v gjson.Result, depth, budget int) {
	frame := 2 + w.lineCost(depth)
	if budget < frame+jsonMinValue {
		_, total := members(v, 0)
		w.marker(total, "items")
		return
	}
	over := len(w.st.comma) + w.lineCost(depth+1)
	avail := budget - frame - over - jsonMarkerCost
	// Whole items from the start while they fit; what is left goes to the
	// next item when it is worth opening; the rest are counted. One pass,
	// nothing held per item.
	w.b.WriteByte('[')
	n, used, rest := 0, 0, 0
	open := true // still writing
	item := func(write func()) {
		if n > 0 {
			w.b.WriteString(w.st.comma)
		}
		w.newline(depth + 1)
		write()
		n++
	}
	v.ForEach(func(_, val gjson.Result) bool {
		switch {
		case !open:
			rest++
		case used+over+len(val.Raw) <= avail:
			used += over + len(val.Raw)
			item(func() { w.b.WriteString(val.Raw) })
		default:
			open = false
			partial := avail - used - over
			if (n == 0 || partial >= 4*jsonMinValue) && (partial >= jsonMinValue || n == 0) {
				item(func() { w.value(val, depth+1, max(partial, jsonMinValue)) })
			} else {
				rest++
			}
		}
		return true
	})
	if rest > 0 {
		item(func() { w.marker(rest, "items") })
	}
	w.newline(depth)
	w.b.WriteByte(']')
}

// str writes a raw JSON string shortened in the middle to about budget
// bytes. The cut never splits an escape sequence or a character.
func (w *jsonWriter) str(raw string, budget int) {
	inner := raw[1 : len(raw)-1]
	room := max(budget-2-len(" [… 12345 bytes omitted …] "), 24)
	if len(inner) <= room+32 {
		w.b.WriteString(raw)
		return
	}
	if w.text(inner, budget) {
		return
	}
	head := safeJSONCut(inner, room*2/3, false)
	tail := safeJSONCut(inner, len(inner)-room/3, true)
	if tail <= head {
		w.b.WriteString(raw)
		return
	}
	w.b.WriteByte('"')
	w.b.WriteString(inner[:head])
	w.b.WriteString(countMarker(tail-head, "bytes"))
	w.b.WriteString(inner[tail:])
	w.b.WriteByte('"')
}

// minTextLines is the number of lines a string must hold to be compressed
// as text: fewer, and its start and end say as much.
const minTextLines = 8

// text writes a string value (inner: its raw bytes between the quotes) of
// at least minTextLines lines compressed as the text it holds, within
// about budget bytes, and reports whether it did: a test run or a stack
// trace returned by an API, a review comment's diff hunk. The failing
// tests, error lines and locations in them are what an agent reads, and a
// cut that keeps the start and the end drops them. A string that holds
// JSON is not opened again (its strings would be, a level at a time), and
// nothing is written unless it is shorter than the input.
func (w *jsonWriter) text(inner string, budget int) bool {
	if budget < MinTargetBytes+2 || strings.Count(inner, `\n`) < minTextLines {
		return false
	}
	text := jsonsafe.Unescape(inner)
	// The aim is in the string's bytes, not its escaped ones.
	aim := max((budget-2)*len(text)/len(inner), MinTargetBytes)
	if len(text) <= aim || hasOwnMarker(text) {
		return false
	}
	// Only the kinds whose rules beat a start and an end on any text: a
	// Markdown body that quotes a debug log reads as a log, and the log's
	// rules would keep its lines over the prose that says what happened.
	// Text keeps its start and end, and its outcomes and errors.
	kind := Detect(text, Hint{})
	switch kind {
	case KindTestLog, KindTraceback, KindDiff, KindText:
	default:
		return false
	}
	out, rep := structural{opts: StructuralOptions{TargetBytes: aim}.withDefaults()}.compressAs(text, Hint{}, kind)
	if !rep.Changed {
		return false
	}
	q := jsonString(out)
	if len(q) >= len(inner)+2 {
		return false
	}
	w.b.WriteString(q)
	w.omitted += rep.Omitted
	return true
}

// safeJSONCut moves a cut position in the inside of a raw JSON string to a
// point that is not inside an escape sequence or a UTF-8 character: down for
// a head cut, up for a tail cut.
func safeJSONCut(s string, at int, up bool) int {
	at = max(0, min(at, len(s)))
	for {
		bad := false
		// An escape that covers the cut starts at most 5 bytes before it
		// ("\uXXXX").
		for k := max(0, at-5); k < at; k++ {
			if s[k] != '\\' {
				continue
			}
			// An odd run of backslashes ending at k means k starts an escape.
			run := 0
			for x := k; x >= 0 && s[x] == '\\'; x-- {
				run++
			}
			if run%2 == 0 {
				continue
			}
			size := 2
			if k+1 < len(s) && s[k+1] == 'u' {
				size = 6
			}
			if k+size > at {
				bad = true
				if up {
					at = min(k+size, len(s))
				} else {
					at = k
				}
				break
			}
		}
		if !bad {
			break
		}
	}
	if up {
		for at < len(s) && !utf8.RuneStart(s[at]) {
			at++
		}
	} else {
		for at > 0 && !utf8.RuneStart(s[at]) {
			at--
		}
	}
	return at
}
