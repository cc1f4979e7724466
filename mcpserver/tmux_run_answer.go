package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/broker"
)

// The tmux_run answer, field for field as the contract's output schema
// (tmux_run_output.json) names it. Fields are in the order of their JSON
// names, so the text is the same as a sorted object's. A pointer without
// omitempty is a field the schema requires that may be null.

// runAnswer is ok:true with data, or ok:false with error.
type runAnswer struct {
	Data  *runData  `json:"data,omitempty"`
	Error *runError `json:"error,omitempty"`
	OK    bool      `json:"ok"`
}

type runData struct {
	Authorization *runReceipt   `json:"authorization"`
	Completion    runCompletion `json:"completion"`
	Stderr        runOutput     `json:"stderr"`
	Stdout        runOutput     `json:"stdout"`
	Target        runTarget     `json:"target"`
}

type runTarget struct {
	Generation string `json:"generation"`
	ID         string `json:"id"`
	Kind       string `json:"kind"` // "pane"
}

// runReceipt is an authorization; null (a nil pointer) before one.
type runReceipt struct {
	EnrollmentGeneration string `json:"enrollment_generation"`
	PaneID               string `json:"pane_id"`
	ProcessGeneration    string `json:"process_generation"`
	RunID                string `json:"run_id"`
	ScriptDigest         string `json:"script_digest"`
	ServerGeneration     string `json:"server_generation"`
	State                string `json:"state"` // "authorized"
}

// Completion states, and effects states, as the contract names them.
const (
	completionUnobserved = "unobserved"
	completionExited     = "exited"
	completionSignaled   = "signaled"

	effectsNone    = "none"
	effectsKnown   = "known"
	effectsUnknown = "unknown"
)

// runCompletion is {state:"unobserved"}, or exited or signaled with both
// exit_status and signal present, the one that does not apply null.
type runCompletion struct {
	State      string
	ExitStatus *int
	Signal     *int
}

// runEnded is an exited or signaled completion as sent.
type runEnded struct {
	ExitStatus *int   `json:"exit_status"`
	Signal     *int   `json:"signal"`
	State      string `json:"state"`
}

// runUnobserved is the unobserved completion as sent.
type runUnobserved struct {
	State string `json:"state"`
}

func (c runCompletion) MarshalJSON() ([]byte, error) {
	if c.State == completionUnobserved {
		return json.Marshal(runUnobserved{State: c.State})
	}
	return json.Marshal(runEnded{ExitStatus: c.ExitStatus, Signal: c.Signal, State: c.State})
}

type runOutput struct {
	Bytes     int    `json:"bytes"`
	Data      string `json:"data"`
	Encoding  string `json:"encoding"`  // "utf-8" or "base64"
	Truncated bool   `json:"truncated"` // always false: overflow refuses completion
}

type runError struct {
	Code     broker.Code     `json:"code"`
	Delivery broker.Delivery `json:"delivery"`
	Effects  runEffects      `json:"effects"`
	Message  string          `json:"message"`
}

type runEffects struct {
	Authorization *runReceipt   `json:"authorization"`
	Completion    runCompletion `json:"completion"`
	State         string        `json:"state"`
}

// newRunAnswer renders an outcome as the contract's answer: ok:true with
// the data (echoing req's target), or ok:false with error{code, message,
// delivery, effects}. Only a parsed request can succeed.
func newRunAnswer(req *broker.Request, out broker.Outcome) runAnswer {
	receipt := newRunReceipt(out.Receipt)
	if out.Code == "" {
		return runAnswer{OK: true, Data: &runData{
			Target:        runTarget{Kind: "pane", ID: req.Pane, Generation: req.Generation},
			Authorization: receipt,
			Completion:    newRunCompletion(out.Completion),
			Stdout:        newRunOutput(out.Stdout),
			Stderr:        newRunOutput(out.Stderr),
		}}
	}
	effects := runEffects{State: effectsNone, Authorization: receipt, Completion: newRunCompletion(nil)}
	switch {
	case out.Completion != nil:
		effects.State = effectsKnown
		effects.Completion = newRunCompletion(out.Completion)
	case out.Delivery != broker.NotSent:
		effects.State = effectsUnknown
	}
	return runAnswer{Error: &runError{Code: out.Code, Message: out.Message, Delivery: out.Delivery, Effects: effects}}
}

func newRunReceipt(r *broker.Receipt) *runReceipt {
	if r == nil {
		return nil
	}
	return &runReceipt{
		State: "authorized", RunID: r.RunID, ScriptDigest: r.ScriptDigest,
		ServerGeneration: r.ServerGeneration, PaneID: r.PaneID,
		EnrollmentGeneration: r.EnrollmentGeneration, ProcessGeneration: r.ProcessGeneration,
	}
}

func newRunCompletion(c *broker.Completion) runCompletion {
	switch {
	case c == nil:
		return runCompletion{State: completionUnobserved}
	case c.Signaled:
		sig := c.Signal
		return runCompletion{State: completionSignaled, Signal: &sig}
	}
	status := c.Status
	return runCompletion{State: completionExited, ExitStatus: &status}
}

// newRunOutput is UTF-8 text when the bytes are valid UTF-8, else base64.
func newRunOutput(b []byte) runOutput {
	if utf8.Valid(b) {
		return runOutput{Encoding: "utf-8", Data: string(b), Bytes: len(b)}
	}
	return runOutput{Encoding: "base64", Data: base64.StdEncoding.EncodeToString(b), Bytes: len(b)}
}
