package broker

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
)

// The tmux_run answer, field for field as the contract's output schema
// (tmux_run_output.json) names it. Fields are in the order of their JSON
// names, so the text is the same as a sorted object's. A pointer without
// omitempty is a field the schema requires that may be null.

// Answer is ok:true with data, or ok:false with error.
type Answer struct {
	Data  *answerData  `json:"data,omitempty"`
	Error *AnswerError `json:"error,omitempty"`
	OK    bool         `json:"ok"`
}

type answerData struct {
	Authorization *AnswerReceipt   `json:"authorization"`
	Completion    answerCompletion `json:"completion"`
	Stderr        answerOutput     `json:"stderr"`
	Stdout        answerOutput     `json:"stdout"`
	Target        AnswerTarget     `json:"target"`
}

type AnswerTarget struct {
	Generation string `json:"generation"`
	ID         string `json:"id"`
	Kind       string `json:"kind"` // "pane"
}

// AnswerReceipt is an authorization; null (a nil pointer) before one.
type AnswerReceipt struct {
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

// answerCompletion is {state:"unobserved"}, or exited or signaled with both
// exit_status and signal present, the one that does not apply null.
type answerCompletion struct {
	State      string
	ExitStatus *int
	Signal     *int
}

// answerEnded is an exited or signaled completion as sent.
type answerEnded struct {
	ExitStatus *int   `json:"exit_status"`
	Signal     *int   `json:"signal"`
	State      string `json:"state"`
}

// answerUnobserved is the unobserved completion as sent.
type answerUnobserved struct {
	State string `json:"state"`
}

func (c answerCompletion) MarshalJSON() ([]byte, error) {
	if c.State == completionUnobserved {
		return json.Marshal(answerUnobserved{State: c.State})
	}
	return json.Marshal(answerEnded{ExitStatus: c.ExitStatus, Signal: c.Signal, State: c.State})
}

type answerOutput struct {
	Bytes     int    `json:"bytes"`
	Data      string `json:"data"`
	Encoding  string `json:"encoding"`  // "utf-8" or "base64"
	Truncated bool   `json:"truncated"` // always false: overflow refuses completion
}

type AnswerError struct {
	Code     Code          `json:"code"`
	Delivery Delivery      `json:"delivery"`
	Effects  answerEffects `json:"effects"`
	Message  string        `json:"message"`
}

type answerEffects struct {
	Authorization *AnswerReceipt   `json:"authorization"`
	Completion    answerCompletion `json:"completion"`
	State         string           `json:"state"`
}

// NewAnswer renders an outcome as the contract's answer: ok:true with
// the data (echoing req's target), or ok:false with error{code, message,
// delivery, effects}. Only a parsed request can succeed.
func NewAnswer(req *Request, out Outcome) Answer {
	receipt := NewAnswerReceipt(out.Receipt)
	if out.Code == "" {
		return Answer{OK: true, Data: &answerData{
			Target:        AnswerTarget{Kind: "pane", ID: req.Pane, Generation: req.Generation},
			Authorization: receipt,
			Completion:    newAnswerCompletion(out.Completion),
			Stdout:        newAnswerOutput(out.Stdout),
			Stderr:        newAnswerOutput(out.Stderr),
		}}
	}
	effects := answerEffects{State: effectsNone, Authorization: receipt, Completion: newAnswerCompletion(nil)}
	switch {
	case out.Completion != nil:
		effects.State = effectsKnown
		effects.Completion = newAnswerCompletion(out.Completion)
	case out.Delivery != NotSent:
		effects.State = effectsUnknown
	}
	return Answer{Error: &AnswerError{Code: out.Code, Message: out.Message, Delivery: out.Delivery, Effects: effects}}
}

func NewAnswerReceipt(r *Receipt) *AnswerReceipt {
	if r == nil {
		return nil
	}
	return &AnswerReceipt{
		State: "authorized", RunID: r.RunID, ScriptDigest: r.ScriptDigest,
		ServerGeneration: r.ServerGeneration, PaneID: r.PaneID,
		EnrollmentGeneration: r.EnrollmentGeneration, ProcessGeneration: r.ProcessGeneration,
	}
}

func newAnswerCompletion(c *Completion) answerCompletion {
	switch {
	case c == nil:
		return answerCompletion{State: completionUnobserved}
	case c.Signaled:
		sig := c.Signal
		return answerCompletion{State: completionSignaled, Signal: &sig}
	}
	status := c.Status
	return answerCompletion{State: completionExited, ExitStatus: &status}
}

// newAnswerOutput is UTF-8 text when the bytes are valid UTF-8, else base64.
func newAnswerOutput(b []byte) answerOutput {
	if utf8.Valid(b) {
		return answerOutput{Encoding: "utf-8", Data: string(b), Bytes: len(b)}
	}
	return answerOutput{Encoding: "base64", Data: base64.StdEncoding.EncodeToString(b), Bytes: len(b)}
}
