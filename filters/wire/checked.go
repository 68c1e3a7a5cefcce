package wire

import "github.com/toolproc/toolproc/filters/memo"

// checkedLiterals remembers the long string literals of the bodies Parse
// accepted (jsonsafe.Options.Literals): a conversation's later requests
// carry its old tool results byte for byte, and checking them again was a
// quarter of the CPU of a request whose results were all seen before. A
// literal is found by a seeded 128-bit hash of its bytes (memo), so a
// body cannot pass an unchecked literal off as a checked one without the
// seeds. Two generations of 32,768 literals, about 2 MB.
var checkedLiterals = literalMemo{memo.New[struct{}](1<<15, nil)}

type literalMemo struct{ m *memo.Memo[struct{}] }

func (l literalMemo) Once(lit string, valid func() bool) bool {
	k := l.m.KeyString(lit)
	if l.m.Has(k) {
		return true
	}
	if !valid() {
		return false
	}
	l.m.Add(k, struct{}{})
	return true
}
