package stream

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/toolproc/toolproc/filters/jsonsafe"
	"github.com/toolproc/toolproc/filters/wire"
)

// XML tool calls in Anthropic answers (seed 002 for Messages clients): with
// Options.XMLToolCalls, the text blocks of the upstream stream are read for
// <invoke> blocks. Text goes out as text blocks, opened only when there is
// text for them; each call becomes a tool_use block (id, name, input {},
// the arguments as one input_json_delta, stop) at the next client index;
// text after a call opens a new text block. The index table and the
// stop_reason repair then work as for any answer: a tool_use block turns
// end_turn into tool_use.

// antXML is one upstream text block being read for calls.
type antXML struct {
	key int64
	sc  xmlScanner
	cur int // client index of the open text block, or -1
}

// xmlBlock returns the tracked text block for an upstream index, or nil.
func (a *antNormalizer) xmlBlock(key int64) *antXML {
	for _, x := range a.xmlBlocks {
		if x.key == key {
			return x
		}
	}
	return nil
}

// xmlStart begins reading an upstream text block; its own start event is
// not sent (a text block opens with the first text).
func (a *antNormalizer) xmlStart(key int64, initial string) {
	if old := a.xmlBlock(key); old != nil {
		a.xmlEnd(old)
	}
	x := &antXML{key: key, cur: -1}
	a.xmlBlocks = append(a.xmlBlocks, x)
	a.xmlPieces(x, x.sc.Feed(initial))
}

// xmlEnd releases what the block held and stops its open text block.
func (a *antNormalizer) xmlEnd(x *antXML) {
	a.xmlPieces(x, x.sc.Flush())
	if x.cur >= 0 && a.open[x.cur] {
		a.stopBlock(x.cur)
	}
	for i, y := range a.xmlBlocks {
		if y == x {
			a.xmlBlocks = append(a.xmlBlocks[:i], a.xmlBlocks[i+1:]...)
			break
		}
	}
}

// xmlEndAll ends every tracked block, in the order they started.
func (a *antNormalizer) xmlEndAll() {
	for len(a.xmlBlocks) > 0 {
		a.xmlEnd(a.xmlBlocks[0])
	}
}

func (a *antNormalizer) xmlPieces(x *antXML, pieces []xmlPiece) {
	for _, p := range pieces {
		switch p.Kind {
		case xmlText, xmlFinal:
			if p.Text == "" {
				continue
			}
			if x.cur < 0 || !a.open[x.cur] {
				x.cur = a.openBlock(`{"type":"text","text":""}`)
			}
			a.emitJSON("content_block_delta", `{"type":"content_block_delta","index":`+strconv.Itoa(x.cur)+
				`,"delta":{"type":"text_delta","text":`+string(wire.QuoteString(p.Text))+`}}`)
		case xmlCall:
			if x.cur >= 0 && a.open[x.cur] {
				a.stopBlock(x.cur)
			}
			x.cur = -1
			a.toolUse = true
			c := a.openBlock(`{"type":"tool_use","id":` + string(wire.QuoteString(a.newID("toolu_"))) + `,"name":` +
				string(wire.QuoteString(p.Name)) + `,"input":{}}`)
			a.emitJSON("content_block_delta", `{"type":"content_block_delta","index":`+strconv.Itoa(c)+
				`,"delta":{"type":"input_json_delta","partial_json":`+string(wire.QuoteString(p.Args))+`}}`)
			a.stopBlock(c)
		}
	}
}

// openBlock starts a client block with the given content_block and returns
// its index.
func (a *antNormalizer) openBlock(block string) int {
	c := len(a.open)
	a.open = append(a.open, true)
	a.emitJSON("content_block_start", `{"type":"content_block_start","index":`+strconv.Itoa(c)+`,"content_block":`+block+`}`)
	return c
}

func (a *antNormalizer) emitJSON(name, data string) {
	a.out = append(a.out, Encode(Named(name, []byte(data)))...)
}

// xmlDelta handles a delta of a tracked block: text is read for calls;
// other deltas go to the open text block, or nowhere when none is open.
func (a *antNormalizer) xmlDelta(x *antXML, root gjson.Result, e antOut) {
	d := root.Get("delta")
	if d.Get("type").Str == "text_delta" {
		a.xmlPieces(x, x.sc.Feed(d.Get("text").String()))
		return
	}
	if x.cur >= 0 && a.open[x.cur] {
		e.setIndex(root.Get("index"), x.cur)
		a.emit(e)
	}
}

// FixAnthropicJSONXML turns <invoke> blocks in the text blocks of an
// Anthropic JSON answer into tool_use blocks (the text around them stays,
// a final_answer becomes its answer text) and the stop_reason end_turn
// into tool_use when a call was made. ok is false when the body is not such
// an answer or holds neither; it is then left alone.
func FixAnthropicJSONXML(body []byte) ([]byte, bool) {
	root := gjson.ParseBytes(body)
	content := root.Get("content")
	if !content.IsArray() || root.Get("type").Str != "message" {
		return body, false
	}
	var blocks []string
	calls, finals := 0, 0
	content.ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str != "text" {
			blocks = append(blocks, b.Raw)
			return true
		}
		var sc xmlScanner
		pieces := append(sc.Feed(b.Get("text").String()), sc.Flush()...)
		text := ""
		flush := func() {
			if text != "" {
				blocks = append(blocks, `{"type":"text","text":`+string(wire.QuoteString(text))+`}`)
				text = ""
			}
		}
		for _, p := range pieces {
			switch p.Kind {
			case xmlText, xmlFinal:
				text += p.Text
				if p.Kind == xmlFinal {
					finals++
				}
			case xmlCall:
				flush()
				calls++
				blocks = append(blocks, `{"type":"tool_use","id":`+string(wire.QuoteString("toolu_"+NewCallID()[len("call_"):]))+
					`,"name":`+string(wire.QuoteString(p.Name))+`,"input":`+p.Args+`}`)
			}
		}
		flush()
		return true
	})
	if calls == 0 && finals == 0 {
		return body, false
	}
	out, err := sjson.SetRawBytes(body, "content", []byte("["+strings.Join(blocks, ",")+"]"))
	if err != nil {
		return body, false
	}
	if r := root.Get("stop_reason"); calls > 0 && (r.Type == gjson.Null || r.Str == "end_turn" || !r.Exists()) {
		if o, err := sjson.SetRawBytes(out, "stop_reason", []byte(`"tool_use"`)); err == nil {
			out = o
		}
	}
	if !jsonsafe.Valid(out) {
		return body, false
	}
	return out, true
}
