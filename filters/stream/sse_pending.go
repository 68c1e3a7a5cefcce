package stream

// pending is the incomplete event the decoder holds: what a transform that
// gives up must hand on after the events it completed.
func (d *Decoder) pending() []byte { return d.buf }
