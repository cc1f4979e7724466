package request

import "time"

// The request protocol, on the request socket: one connection per request. The command writes
// one JSON object (a message) on one line of at most maxLine bytes; the server checks the
// writer, answers one JSON object (an answer) on one line and closes the connection.

// maxLine bounds a request line.
const maxLine = 4096

// Ops of a message.
const (
	opEnroll = "enroll" // invite the pane the message names, if the checks pass
	opStatus = "status" // report the invited and enrolled panes and their recent runs
)

// Reasons of a refusal, beside enroll's (agent-input, limit, wrong-uid, wrong-server).
const (
	reasonBadRequest    = "bad-request"
	reasonNoPane        = "no-pane"
	reasonNotForeground = "not-foreground"
	reasonNotZsh        = "not-zsh"
	reasonLentElsewhere = "lent-elsewhere"
	reasonFailed        = "failed"
)

// message is a request.
type message struct {
	V    int    `json:"v"` // 1
	Op   string `json:"op"`
	Pane string `json:"pane,omitempty"` // $TMUX_PANE
	TMUX string `json:"tmux,omitempty"` // $TMUX
}

// answer is the server's reply.
type answer struct {
	OK         bool    `json:"ok"`
	Reason     string  `json:"reason,omitempty"`
	Message    string  `json:"message,omitempty"` // a refusal, said for the person
	File       string  `json:"file,omitempty"`    // the invitation to source
	LifetimeMS int64   `json:"lifetime_ms,omitempty"`
	Status     *Status `json:"status,omitempty"`
}

// Status is what a server reports to libtmux-mcp status.
type Status struct {
	Server Record       `json:"server"`
	Panes  []PaneStatus `json:"panes"`
}

// PaneStatus is one invited, enrolled or lost pane.
type PaneStatus struct {
	Pane  string      `json:"pane"`
	State string      `json:"state"`
	PID   int         `json:"pid,omitempty"`
	Runs  []RunStatus `json:"runs,omitempty"` // oldest first
}

// RunStatus is one run.
type RunStatus struct {
	Start      time.Time `json:"start"`
	DurationMS int64     `json:"duration_ms"`
	FirstLine  string    `json:"first_line"`
	Digest     string    `json:"digest"`
	Code       string    `json:"code,omitempty"` // a tmux_run error code; empty when it completed
	Exit       *int      `json:"exit,omitempty"`
	Signal     int       `json:"signal,omitempty"`
	Running    bool      `json:"running,omitempty"` // a tmux_run_start run still going
}
