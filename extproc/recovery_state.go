package extproc

// recoveryState is what overflow recovery (recovery.go) keeps across the
// answers of one exchange.
type recoveryState struct {
	// clientBody is the client's own request body: rungs that keep
	// originals start from it.
	clientBody []byte
	rungsUsed  map[string]bool // rungs already tried, each at most once
	gate       bool            // the answer runs through an overflow gate
	replays    int             // recovery replays sent, against recovery.max_replays
	// held is a FULL_DUPLEX error answer held until its body is classified.
	held *heldError
	rung string // the rung whose replay answered, for the receipt and the audit line
	// ladder is what the ladder's rungs share (ladder_rungs.go).
	ladder ladderState
}
