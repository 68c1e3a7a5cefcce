package extproc

import (
	"errors"
	"strconv"
	"strings"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"

	"github.com/toolproc/toolproc/filters/pipeline"
)

// ReceiptHeader is set on every answer to a request toolproc processed. It
// tells the client what was done to the request, compactly:
//
//	x-toolproc-receipt: v1; c=3; cl=1; t=2; rm=12345; refs=4; step=2; irr=0; rung=-
//
//	v1    the format version; a new field may be added to v1, a changed
//	      meaning gets v2
//	c     tool results compressed (structure-aware, with a shadow reference)
//	cl    tool results clamped (cut to the byte/line budget)
//	t     tool exchanges the history tiers summarised
//	rm    bytes toolproc took out of the request's tool results
//	refs  shadow references offered (ids expand_context can open)
//	step  the tiers' step for this request (0: the tiers did not act)
//	irr   irrecoverable: tool results cut with no original kept to read
//	      back (clamped, or summarised where no reference could be
//	      given); each says so in its text
//	rung  the overflow-recovery rung whose replay answered, "-" for none
//
// The same string is in Envoy's dynamic metadata as toolproc.receipt.
const ReceiptHeader = "x-toolproc-receipt"

// BypassHeader on a request opts it out: it passes both ways untouched
// (server.client_bypass turns the header off).
const BypassHeader = "x-toolproc-bypass"

// Receipt is what toolproc did to one request.
type Receipt struct {
	Compressed   int
	Clamped      int
	Tiered       int
	BytesRemoved int
	References   int
	Step         int
	// Irrecoverable results lost content with no way back.
	Irrecoverable int
	Rung          string // "" when no recovery replay answered
}

// receiptVersion is the only version this build writes and parses.
const receiptVersion = "v1"

// String is the header value.
func (r Receipt) String() string {
	rung := r.Rung
	if rung == "" {
		rung = "-"
	}
	b := make([]byte, 0, 64)
	b = append(b, receiptVersion...)
	for _, f := range []struct {
		k string
		v int
	}{{"c", r.Compressed}, {"cl", r.Clamped}, {"t", r.Tiered}, {"rm", r.BytesRemoved}, {"refs", r.References}, {"step", r.Step}, {"irr", r.Irrecoverable}} {
		b = append(b, "; "...)
		b = append(b, f.k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(f.v), 10)
	}
	b = append(b, "; rung="...)
	b = append(b, rung...)
	return string(b)
}

// ErrReceipt is returned by ParseReceipt for a value it cannot read.
var ErrReceipt = errors.New("not a v1 toolproc receipt")

// ParseReceipt reads a header value written by String. Unknown keys are
// skipped, so a v1 reader keeps working when fields are added.
func ParseReceipt(s string) (Receipt, error) {
	parts := strings.Split(s, ";")
	if strings.TrimSpace(parts[0]) != receiptVersion {
		return Receipt{}, ErrReceipt
	}
	var r Receipt
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return Receipt{}, ErrReceipt
		}
		if k == "rung" {
			if v != "-" {
				r.Rung = v
			}
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Receipt{}, ErrReceipt
		}
		switch k {
		case "c":
			r.Compressed = n
		case "cl":
			r.Clamped = n
		case "t":
			r.Tiered = n
		case "rm":
			r.BytesRemoved = n
		case "refs":
			r.References = n
		case "step":
			r.Step = n
		case "irr":
			r.Irrecoverable = n
		}
	}
	return r, nil
}

// ReceiptOf is the receipt of a request rewrite's report (the references
// and the tier step are the exchange's; see exchange.receipt).
func ReceiptOf(rep pipeline.Report) Receipt { return receiptOf(&rep) }

// receiptOf sums a request's report: each changed result counts for the
// filter that changed it, and the bytes removed are the tool results'
// shrinkage (the expand_context declaration toolproc adds is not a
// removal, and is not subtracted either).
func receiptOf(rep *pipeline.Report) Receipt {
	var r Receipt
	if rep == nil {
		return r
	}
	r.Irrecoverable = irrecoverable(rep.Changes)
	for _, c := range rep.Changes {
		switch c.Filter {
		case "compress":
			r.Compressed++
		case "clamp", "overflow_clamp", "overflow_truncate":
			r.Clamped++
		case "tiers":
			r.Tiered++
		}
		if d := c.BytesBefore - c.BytesAfter; d > 0 {
			r.BytesRemoved += d
		}
	}
	return r
}

// receipt is this exchange's receipt so far.
func (x *exchange) receipt() Receipt {
	r := receiptOf(x.rewrite.report)
	r.References, r.Step, r.Rung = x.rewrite.compressed, x.rewrite.tierStep, x.recovery.rung
	return r
}

// withReceipt adds the receipt to a response-headers answer of a
// processed request.
func (x *exchange) withReceipt(resp *extprocv3.ProcessingResponse) *extprocv3.ProcessingResponse {
	if resp == nil || !x.process || x.rewrite.report == nil {
		return resp
	}
	hr := resp.GetResponseHeaders()
	if hr == nil {
		return resp
	}
	if hr.Response == nil {
		hr.Response = &extprocv3.CommonResponse{}
	}
	cr := hr.Response
	if cr.HeaderMutation == nil {
		cr.HeaderMutation = &extprocv3.HeaderMutation{}
	}
	cr.HeaderMutation.SetHeaders = append(cr.HeaderMutation.SetHeaders, setHeader(ReceiptHeader, x.receipt().String()))
	return resp
}

// irrecoverable counts the results that lost content with no original kept
// (review round 3, N1: every such cut is marked, in-band and here): those
// the tiers marked so, and those a clamp cut (the clamp keeps no
// original) unless compression kept the result's original first.
func irrecoverable(changes []pipeline.Change) int {
	referenced := map[int]bool{}
	for _, c := range changes {
		if c.Filter == "compress" {
			referenced[c.Ordinal] = true
		}
	}
	lost := map[int]bool{}
	for _, c := range changes {
		switch {
		case c.Irrecoverable:
			lost[c.Ordinal] = true
		case c.Filter == "clamp" || c.Filter == "overflow_clamp" || c.Filter == "overflow_truncate":
			if !referenced[c.Ordinal] {
				lost[c.Ordinal] = true
			}
		}
	}
	return len(lost)
}
