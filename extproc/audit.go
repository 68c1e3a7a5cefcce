package extproc

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/toolproc/toolproc/filters/shadow"
	"github.com/toolproc/toolproc/filters/usage"
)

// auditLog appends one JSON line per compression decision. Lines carry
// sizes, kinds, tool names and a reference derived from the shadow id,
// never content, credentials or the id itself (an id is what expand_context
// takes: a bearer capability within its tenant): the file is meant to be
// kept and shared for tuning.
type auditLog struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer
}

// auditRecord is one line.
type auditRecord struct {
	Time    string `json:"time"`
	Dialect string `json:"dialect"`
	Profile string `json:"profile"`
	Model   string `json:"model,omitempty"`
	Tenant  string `json:"tenant"`        // the keyed hash of the tenant, never the credential
	Ref     string `json:"ref,omitempty"` // shadow.AuditRef of the result's shadow id
	// Tiers is set on the one line a request gets when the tool-history
	// tiers rewrote it.
	Tiers *tierAudit `json:"tiers,omitempty"`
	shadow.Decision
}

// tierAudit is what the tiers did to one request.
type tierAudit struct {
	Step           int `json:"step"`
	Summarized     int `json:"summarized"`
	Inputs         int `json:"inputs"`
	Flattened      int `json:"flattened,omitempty"`
	BytesCleared   int `json:"bytes_cleared"`
	EstimatedBytes int `json:"estimated_bytes"`
	// Middle is how many recent results the middle tier compressed;
	// KeptWhole how many the request keeps whole when the window forced
	// fewer than keep_recent; Forced that the last step was taken because
	// the request would not have fit the window.
	Middle    int  `json:"middle,omitempty"`
	KeptWhole int  `json:"kept_whole,omitempty"`
	Forced    bool `json:"forced,omitempty"`
}

func openAudit(path string) (*auditLog, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return &auditLog{w: os.Stderr}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit.path: %w", err)
	}
	return &auditLog{w: f, closer: f}, nil
}

func (a *auditLog) write(base auditRecord, ds []shadow.Decision) {
	if a == nil || len(ds) == 0 {
		return
	}
	base.Time = time.Now().UTC().Format(time.RFC3339Nano)
	var buf []byte
	for _, d := range ds {
		base.Decision = d
		base.Ref = ""
		if d.ShadowID != "" {
			base.Ref = shadow.AuditRef(d.ShadowID)
		}
		line, err := json.Marshal(base)
		if err != nil {
			continue
		}
		buf = append(append(buf, line...), '\n')
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.Write(buf)
}

// writeTiers appends the tiers' line for one request.
func (a *auditLog) writeTiers(base auditRecord, t tierAudit) {
	if a == nil {
		return
	}
	base.Time = time.Now().UTC().Format(time.RFC3339Nano)
	base.Tiers = &t
	base.Decision = shadow.Decision{Outcome: "tiers"}
	line, err := json.Marshal(base)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.Write(append(line, '\n'))
}

// exchangeAudit is the one line every processed exchange gets when it
// ends: what toolproc did to the request beside what the provider billed
// for it (the answer and any replays). It links the two by request
// (x-request-id, set by Envoy), with the tenant's keyed hash, the model and
// the profile; no content, no credentials. `toolproc report` reads these
// lines.
type exchangeAudit struct {
	Time          string       `json:"time"`
	Kind          string       `json:"kind"` // "exchange"
	RequestID     string       `json:"request_id,omitempty"`
	Dialect       string       `json:"dialect"`
	Profile       string       `json:"profile"`
	Model         string       `json:"model,omitempty"`
	Tenant        string       `json:"tenant,omitempty"` // keyed hash; "" without the deployment secret
	Results       int          `json:"tool_results"`
	Compressed    int          `json:"compressed"`
	Clamped       int          `json:"clamped"`
	Tiered        int          `json:"tiered"`
	BytesIn       int          `json:"bytes_in"`
	BytesOut      int          `json:"bytes_out"`
	BytesRemoved  int          `json:"bytes_removed"`
	TokensRemoved int64        `json:"tokens_removed"` // bytes_removed on the provider's scale (billing.go)
	References    int          `json:"references"`
	Step          int          `json:"tier_step"`
	Rung          string       `json:"rung,omitempty"`
	Expansions    int          `json:"expansions"`
	Replays       int          `json:"replays_billed"`
	Usage         *usage.Usage `json:"usage,omitempty"`
	UsageOutcome  string       `json:"usage_outcome,omitempty"` // read, missing, too_large, bad_frame
	Receipt       string       `json:"receipt"`
}

// writeExchange appends an exchange's line.
func (a *auditLog) writeExchange(r exchangeAudit) {
	if a == nil {
		return
	}
	r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.Write(append(line, '\n'))
}

func (a *auditLog) Close() error {
	if a == nil || a.closer == nil {
		return nil
	}
	return a.closer.Close()
}
