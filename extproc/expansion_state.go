package extproc

// expansionState is what answering expand_context keeps across the
// answers of one exchange (expand.go).
type expansionState struct {
	// expandable: the body last sent upstream offers expand_context, so
	// its answer's calls of it are answered here.
	expandable bool
	loops      int // continuations sent, against expand.max_loops
}
