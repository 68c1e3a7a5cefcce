package clamp

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// Structured tool results (Bedrock {"json": ...} content, Gemini
// functionResponse.response) must stay JSON of the same kind: cutting their
// bytes would hand the provider invalid JSON and a 400. JSON keeps the
// structure and shrinks what is big inside it: long strings are clamped as
// text, long arrays keep their first items plus a count marker, objects with
// a great many keys keep their first keys plus a count key. The serialized
// result fits MaxBytes and no string in it has more than MaxLines lines.

// noteKey is added to a clamped top-level object to tell the model what
// happened; a leading underscore keeps it apart from tool-defined keys.
const noteKey = "_toolproc_note"

const jsonNote = "tool output truncated to fit the output limit; strings, arrays and keys marked as omitted were cut; request smaller chunks (offset/limit) or specific sections"

// jsonShape is one step of the shrinking schedule.
type jsonShape struct {
	strBytes int // longest string kept, in bytes
	items    int // array items kept
	keys     int // object keys kept
}

// JSON clamps one JSON value. Values under both limits come back identical
// (Changed=false). Invalid JSON is returned unchanged; the wire layer only
// hands over values it parsed. A value nested past jsonsafe.MaxDepth is
// never walked: over the byte limit it is clamped as text.
func JSON(raw string, lim Limits) (string, Report) {
	maxBytes, maxLines := axis(lim.MaxBytes), axis(lim.MaxLines)
	rep := Report{BytesBefore: len(raw), BytesAfter: len(raw)}
	switch err := jsonsafe.CheckString(raw, jsonsafe.Options{}); {
	case errors.Is(err, jsonsafe.ErrTooDeep):
		// The renderer walks containers recursively: a value nested past
		// the limit is never walked. Over the byte limit it becomes a
		// clamped text rendering inside a value of the same kind.
		if len(raw) <= maxBytes {
			return raw, rep
		}
		return jsonFallback(gjson.Parse(raw), raw, lim, rep)
	case err != nil:
		return raw, rep
	}
	v := gjson.Parse(raw)
	rep.LinesBefore = jsonLines(v)
	rep.LinesAfter = rep.LinesBefore
	if len(raw) <= maxBytes && rep.LinesBefore <= maxLines {
		return raw, rep
	}
	top := v.IsObject()
	// First the whole budget for strings, trimmed by what escaping and the
	// rest of the value add (a few tries converge for one large string, the
	// common tool result); then the halving schedule. Halving at once gave
	// a 538 KB string 25 KB of a 51,200-byte budget.
	str := maxBytes
	for range 4 {
		out := renderJSON(v, jsonShape{strBytes: str, items: 256, keys: 512}, maxLines, top)
		if len(out) <= maxBytes {
			return out, jsonReport(rep, out)
		}
		over := len(out) - maxBytes
		if str <= 2*over {
			break
		}
		str -= over + over/8 + 16
	}
	for _, shape := range shrinkSchedule(str) {
		out := renderJSON(v, shape, maxLines, top)
		if len(out) <= maxBytes {
			return out, jsonReport(rep, out)
		}
	}
	// Even the tightest shape is too big (say, deeply nested containers):
	// keep the kind and put a clamped text rendering inside.
	return jsonFallback(v, raw, lim, rep)
}

func jsonReport(rep Report, out string) Report {
	rep.Changed = true
	rep.BytesAfter = len(out)
	rep.LinesAfter = jsonLines(gjson.Parse(out))
	return rep
}

// shrinkSchedule goes from generous to tight; the first shape that fits wins,
// so the same input always gives the same output.
func shrinkSchedule(maxBytes int) []jsonShape {
	var s []jsonShape
	items, keys := 256, 512
	for str := maxBytes; ; str /= 2 {
		if str < 32 {
			str = 32
		}
		s = append(s, jsonShape{strBytes: str, items: items, keys: keys})
		if str == 32 && items == 1 {
			return s
		}
		items = max(1, items/2)
		keys = max(4, keys/2)
	}
}

// renderJSON renders v under one shape. Cuts inside strings and arrays
// carry their own in-band markers ("[… N lines omitted …]", "[… N more
// items omitted …]"), so they need no other note; only when keys were
// omitted (a count, not their text) does the top-level object get a note
// key saying what to do about it. One note, never two.
func renderJSON(v gjson.Result, shape jsonShape, maxLines int, top bool) string {
	r := jsonRenderer{shape: shape, maxLines: maxLines}
	b := r.append(nil, v)
	if top && v.IsObject() && r.keysCut {
		// Add the note as the last key of the top-level object.
		if len(b) > 2 {
			b = append(b[:len(b)-1], ',')
		} else {
			b = b[:len(b)-1]
		}
		b = append(b, wire.QuoteString(noteKey)...)
		b = append(b, ':')
		b = append(b, wire.QuoteString(jsonNote)...)
		b = append(b, '}')
	}
	return string(b)
}

// jsonRenderer writes a compact copy of a value under one shape and
// remembers whether it had to cut anything (re-rendering alone can be enough
// for pretty-printed JSON, and then no note is due).
type jsonRenderer struct {
	shape    jsonShape
	maxLines int
	cut      bool
	keysCut  bool // keys were omitted: no in-band marker says which
}

func (r *jsonRenderer) append(b []byte, v gjson.Result) []byte {
	shape, maxLines := r.shape, r.maxLines
	switch {
	case v.IsObject():
		return r.appendContainer(b, v, '{', '}', shape.keys, true, func(b []byte, omitted int) []byte {
			r.keysCut = true
			b = append(b, wire.QuoteString("_toolproc_omitted_keys")...)
			b = append(b, ':')
			return strconv.AppendInt(b, int64(omitted), 10)
		})
	case v.IsArray():
		return r.appendContainer(b, v, '[', ']', shape.items, false, func(b []byte, omitted int) []byte {
			return append(b, wire.QuoteString("[… "+strconv.Itoa(omitted)+" more items omitted …]")...)
		})
	case v.Type == gjson.String:
		s := v.String()
		if len(s) <= shape.strBytes && CountLines(s) <= maxLines && utf8.ValidString(s) {
			return append(b, v.Raw...)
		}
		cut, rep := Text(s, Limits{MaxBytes: max(shape.strBytes, 32), MaxLines: maxLines})
		r.cut = r.cut || rep.Changed
		return append(b, wire.QuoteString(cut)...)
	default:
		return append(b, v.Raw...)
	}
}

// appendContainer renders an object (withKeys) or array, keeping its first
// limit members and closing with a count of the rest, in one pass.
func (r *jsonRenderer) appendContainer(b []byte, v gjson.Result, open, close byte, limit int, withKeys bool, omittedMarker func([]byte, int) []byte) []byte {
	b = append(b, open)
	kept, omitted := 0, 0
	v.ForEach(func(k, val gjson.Result) bool {
		if kept == limit {
			omitted++
			return true
		}
		if kept > 0 {
			b = append(b, ',')
		}
		if withKeys {
			// A key is copied as written unless it holds bytes that are
			// not UTF-8: a rewritten value is valid UTF-8 throughout, as
			// its strings are (QuoteString writes U+FFFD for such bytes).
			if utf8.ValidString(k.Raw) {
				b = append(b, k.Raw...)
			} else {
				b = append(b, wire.QuoteString(k.String())...)
			}
			b = append(b, ':')
		}
		b = r.append(b, val)
		kept++
		return true
	})
	if omitted > 0 {
		r.cut = true
		if kept > 0 {
			b = append(b, ',')
		}
		b = omittedMarker(b, omitted)
	}
	return append(b, close)
}

// jsonFallback keeps the value's kind and carries a clamped text rendering.
func jsonFallback(v gjson.Result, raw string, lim Limits, rep Report) (string, Report) {
	maxBytes := axis(lim.MaxBytes)
	wrap := func(text string) string {
		switch {
		case v.IsObject():
			return `{"output":` + string(wire.QuoteString(text)) + `,"` + noteKey + `":` + string(wire.QuoteString(jsonNote)) + `}`
		case v.IsArray():
			return `[` + string(wire.QuoteString(text)) + `]`
		}
		return string(wire.QuoteString(text))
	}
	overhead := len(wrap(""))
	budget := maxBytes - overhead
	for budget >= 0 {
		text, _ := Text(raw, Limits{MaxBytes: max(budget, 1), MaxLines: lim.MaxLines, Keep: lim.Keep})
		if out := wrap(text); len(out) <= maxBytes || budget == 0 {
			return out, jsonReport(rep, out)
		}
		// Escaping made it longer than its byte count: shrink and retry.
		budget = max(0, budget-max(16, budget/8))
	}
	out := wrap("")
	return out, jsonReport(rep, out)
}

// jsonLines is what the line limit is measured on for JSON: the largest
// number of lines in any one string, since the serialization itself is one
// line and only strings carry line breaks.
func jsonLines(v gjson.Result) int { return maxStringLines(v) }

func maxStringLines(v gjson.Result) int {
	m := 0
	var walk func(gjson.Result)
	walk = func(x gjson.Result) {
		switch {
		case x.IsObject() || x.IsArray():
			x.ForEach(func(_, val gjson.Result) bool { walk(val); return true })
		case x.Type == gjson.String:
			if n := CountLines(x.String()); n > m {
				m = n
			}
		}
	}
	walk(v)
	return m
}
