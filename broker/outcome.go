package broker

import (
	"bytes"
	"fmt"
	"time"

	"github.com/libtmux/libtmux-mcp/helper/job"
)

// Defaults that a zero Limits gets.
const (
	DefaultShellAnswer = 2 * time.Second   // how long a shell has to answer RUN
	DefaultRunTimeout  = 120 * time.Second // ceiling of one run
)

// Limits of one Request, owned here and checked by Request.Check (and by Run). The helper's job
// codec enforces the same numbers on the wire.
const (
	MaxScript          = job.MaxScript     // the largest script, in bytes
	MaxOutputLimit     = job.MaxOutput     // the largest StdoutLimit or StderrLimit, in bytes
	DefaultOutputLimit = job.DefaultOutput // the limit a caller uses for an output it gives none for
)

// Code is a tmux_run error code; the empty Code is success.
type Code string

// Error codes of tmux_run: a closed set.
const (
	CodeInvalidTarget     Code = "invalid_target"
	CodeInvalidScript     Code = "invalid_script"
	CodeNotEnrolled       Code = "not_enrolled"
	CodeEnrollmentLost    Code = "enrollment_lost"
	CodeStaleGeneration   Code = "stale_generation"
	CodeProcessChanged    Code = "process_changed"
	CodePaneDead          Code = "pane_dead"
	CodeRunInProgress     Code = "run_in_progress"
	CodeTooManyRuns       Code = "too_many_runs" // tmux_run_start: the cap of background runs in flight
	CodeShellBusy         Code = "shell_busy"
	CodeNotAtPrompt       Code = "not_at_prompt"
	CodeSpawnFailed       Code = "spawn_failed"
	CodeHelperFailed      Code = "helper_failed"
	CodeOutputOverflow    Code = "output_overflow"
	CodeTimedOut          Code = "timed_out"
	CodeCancelled         Code = "cancelled"
	CodeBrokerUnavailable Code = "broker_unavailable"
	CodeNotSupported      Code = "not_supported"
)

// Delivery says how far a request got.
type Delivery string

// Deliveries, from least to most.
const (
	NotSent      Delivery = "not_sent"      // the job never left the broker
	PossiblySent Delivery = "possibly_sent" // written to the helper, start not confirmed
	Observed     Delivery = "observed"      // the helper confirmed it started the script
)

// Recovery is the next step that helps after a refusal when it is the caller's to name: this
// package does not know how its server is run, which tools the caller has, or what the
// person at the pane was told. The zero Recovery means Message already says what to do, or that
// the code says it all.
type Recovery string

const (
	// RecoveryNone: Message is complete.
	RecoveryNone Recovery = ""
	// RecoveryReinvite: the pane's enrolled shell is gone for good. A fresh invitation for the
	// pane (from whoever runs the server), sourced by a person in its zsh, enrolls it again.
	RecoveryReinvite Recovery = "reinvite"
	// RecoveryEnroll: the pane has no enrollment. Which step helps depends on whether the
	// pane exists and holds a live or an expired invitation, which the caller can tell.
	RecoveryEnroll Recovery = "enroll"
)

// Receipt is the authorization of one run.
type Receipt struct {
	RunID                string
	ScriptDigest         string
	ServerGeneration     string
	PaneID               string
	EnrollmentGeneration string
	ProcessGeneration    string
}

// Completion is how the script ended: an exit status or a signal.
type Completion struct {
	Signaled bool
	Status   int // exit status when !Signaled
	Signal   int // signal number when Signaled
}

// Outcome is everything known about one run. Code is empty on success (the
// script completed and was observed, whatever its status).
type Outcome struct {
	Code       Code
	Message    string // what went wrong, and the step that helps unless Recovery names one
	Delivery   Delivery
	Recovery   Recovery    // the step the caller names; RecoveryNone when Message says it
	Receipt    *Receipt    // nil until authorized
	Completion *Completion // nil unless observed
	Survivors  *Survivors  // what the script left running in its group; nil unless checked
	Stdout     []byte
	Stderr     []byte
}

// Request is one tmux_run call.
type Request struct {
	Pane        string
	Generation  string // the caller's view of the server generation
	Script      []byte
	StdoutLimit int
	StderrLimit int
	// Progress, when set, is called about once a second while the script
	// runs with the time since authorization and the bytes so far.
	Progress func(Progress)
}

// Check reports whether req is within this package's limits: a script of at most MaxScript
// bytes with no NUL, each output limit 0..MaxOutputLimit. When it is not, the refusal is an
// Outcome with CodeInvalidScript, delivery NotSent, and a message naming the first fault.
// (Pane and Generation are checked against tmux by Run.)
func (req Request) Check() (refusal Outcome, ok bool) {
	bad := func(format string, a ...any) (Outcome, bool) {
		return Outcome{Code: CodeInvalidScript, Message: fmt.Sprintf(format, a...), Delivery: NotSent}, false
	}
	switch {
	case bytes.IndexByte(req.Script, 0) >= 0:
		return bad("the script contains a NUL character; POSIX sh scripts cannot")
	case len(req.Script) > MaxScript:
		return bad("the script is %d bytes; at most %d are allowed", len(req.Script), MaxScript)
	case req.StdoutLimit < 0 || req.StdoutLimit > MaxOutputLimit:
		return bad("stdout_limit must be 0..%d", MaxOutputLimit)
	case req.StderrLimit < 0 || req.StderrLimit > MaxOutputLimit:
		return bad("stderr_limit must be 0..%d", MaxOutputLimit)
	}
	return Outcome{}, true
}

// Progress reports a running script.
type Progress struct {
	ElapsedMS   int64
	StdoutBytes int
	StderrBytes int
}
