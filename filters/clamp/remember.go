package clamp

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/toolproc/toolproc/filters/memo"
	"github.com/toolproc/toolproc/filters/wire"
)

// Memo remembers what the clamp did to a result, by the result's bytes. An
// old result comes back on every later turn of a conversation, and a large
// one the other filters leave alone (a file read: compression skips reads
// by default) was decoded and cut again on each: a seventh of a
// conversation's steady-state rewrite. A result under the limits whose
// size bounds could not show it is remembered too, so it is not decoded
// again to count its lines. A memo serves one Filter configuration (one
// profile's limits, read rule and Cutter): give each its own.
type Memo struct {
	m *memo.Memo[cut]
}

// NewMemo returns a memo holding up to maxBytes of remembered edits per
// generation (two generations, as every memo of package memo).
func NewMemo(maxBytes int) *Memo {
	return &Memo{m: memo.New(maxBytes, cut.cost)}
}

// cut is one result's clamp: its edits, each tied to the block it
// replaces, and what the change record says.
type cut struct {
	edits []blockEdit
	rep   Report
	keep  string
}

// blockEdit is an edit of r.Texts[k] (json false) or r.JSON[k].
type blockEdit struct {
	json bool
	k    int
	e    wire.Edit
}

func (c cut) cost() int {
	n := 64
	for _, b := range c.edits {
		n += len(b.e.Raw) + len(b.e.Text) + 32
	}
	return n
}

// key is r's under lim (the limits it is clamped with, after the read
// rule), read (whether the read rule calls it a file read, which decides
// whether the Cutter applies) and cuts (whether there is a Cutter). The
// Cutter reads the tool's name and arguments; the blocks are keyed by a
// seeded hash of their literals.
func (m *Memo) key(r *wire.ToolResult, lim Limits, read, cuts bool) memo.Key {
	return m.m.Key(func(h *maphash.Hash) {
		var b [8]byte
		word := func(v uint64) {
			binary.LittleEndian.PutUint64(b[:], v)
			_, _ = h.Write(b[:])
		}
		str := func(s string) {
			word(uint64(len(s)))
			_, _ = h.WriteString(s)
		}
		long := func(s string) {
			k := m.m.KeyString(s)
			word(uint64(len(s)))
			word(k[0])
			word(k[1])
		}
		word(uint64(lim.MaxBytes))
		word(uint64(lim.MaxLines))
		str(string(lim.Keep))
		flags := uint64(0)
		if read {
			flags |= 1
		}
		if cuts {
			flags |= 2
		}
		word(flags)
		str(r.ToolName)
		long(r.Args)
		word(uint64(len(r.Texts)))
		for k := range r.Texts {
			long(r.Texts[k].Raw)
		}
		word(uint64(len(r.JSON)))
		for _, j := range r.JSON {
			long(j.Raw)
		}
	})
}

// remember ties edits to r's blocks by their spans. ok is false when an
// edit replaces no whole block (nothing the clamp writes today).
func remember(r *wire.ToolResult, edits []wire.Edit, rep Report, keep string) (cut, bool) {
	c := cut{rep: rep, keep: keep}
	for _, e := range edits {
		b, ok := blockOf(r, e.Span)
		if !ok {
			return cut{}, false
		}
		b.e = e
		c.edits = append(c.edits, b)
	}
	return c, true
}

func blockOf(r *wire.ToolResult, at wire.Span) (blockEdit, bool) {
	for k := range r.Texts {
		if r.Texts[k].Span == at {
			return blockEdit{k: k}, true
		}
	}
	for k := range r.JSON {
		if r.JSON[k].Span == at {
			return blockEdit{json: true, k: k}, true
		}
	}
	return blockEdit{}, false
}

// edits are c's edits for r, a result with the same bytes, wherever its
// blocks sit in this body.
func (c cut) editsFor(r *wire.ToolResult) []wire.Edit {
	if len(c.edits) == 0 {
		return nil
	}
	out := make([]wire.Edit, len(c.edits))
	for i, b := range c.edits {
		if b.json {
			out[i] = b.e.WithSpan(r.JSON[b.k].Span)
		} else {
			out[i] = b.e.WithSpan(r.Texts[b.k].Span)
		}
	}
	return out
}
