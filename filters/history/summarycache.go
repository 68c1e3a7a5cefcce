package history

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/maphash"

	"github.com/toolproc/toolproc/filters/memo"
	"github.com/toolproc/toolproc/filters/wire"
)

// summaryEdit is a result text's summary as the body carries it, and the
// category the change record names.
type summaryEdit struct {
	edit     wire.Edit
	category Category
}

// summaryCache remembers a result text's summary edit, because past the
// cut every request carries the same old results, and building their
// summaries again (the call's category and description, the key lines'
// lookup, the string and its quoting) was a quarter of a conversation's
// steady-state rewrite. A summary is a function of the call (tool name and
// arguments), whether it reported an error, the text (its
// shadow.Fingerprint) and the reference hint, which names the tenant's
// shadow id: all of them are the key, so an entry serves only the same
// tenant's same result. Two generations of 8 MiB.
var summaryCache = memo.New(8<<20, func(s summaryEdit) int { return len(s.edit.Raw) + len(s.edit.Text) + 64 })

// summaryKey is the key of the summary of a text whose fingerprint is sum,
// returned by the call tool(args), with hint.
func summaryKey(tool, args string, isError bool, sum *[sha256.Size]byte, hint string) memo.Key {
	return summaryCache.KeyWith(func(h *maphash.Hash) {
		_, _ = h.Write(sum[:])
		if isError {
			_ = h.WriteByte(1)
		} else {
			_ = h.WriteByte(0)
		}
		writeLen(h, tool)
		writeLen(h, hint)
	}, args)
}

// writeLen writes s with its length first, so two fields never read as
// one.
func writeLen(h *maphash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	_, _ = h.Write(n[:])
	_, _ = h.WriteString(s)
}
