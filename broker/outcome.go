package broker

import "time"

// Defaults that a zero Limits gets.
const (
	DefaultShellAnswer = 2 * time.Second   // how long a shell has to answer RUN
	DefaultRunTimeout  = 120 * time.Second // ceiling of one run
)

// Error codes of tmux_run: a closed set.
const (
	CodeInvalidTarget     = "invalid_target"
	CodeInvalidScript     = "invalid_script"
	CodeNotEnrolled       = "not_enrolled"
	CodeEnrollmentLost    = "enrollment_lost"
	CodeStaleGeneration   = "stale_generation"
	CodeProcessChanged    = "process_changed"
	CodePaneDead          = "pane_dead"
	CodeRunInProgress     = "run_in_progress"
	CodeShellBusy         = "shell_busy"
	CodeNotAtPrompt       = "not_at_prompt"
	CodeSpawnFailed       = "spawn_failed"
	CodeHelperFailed      = "helper_failed"
	CodeOutputOverflow    = "output_overflow"
	CodeTimedOut          = "timed_out"
	CodeCancelled         = "cancelled"
	CodeBrokerUnavailable = "broker_unavailable"
	CodeNotSupported      = "not_supported"
)

// Delivery says how far a request got.
const (
	NotSent      = "not_sent"      // the job never left the broker
	PossiblySent = "possibly_sent" // written to the helper, start not confirmed
	Observed     = "observed"      // the helper confirmed it started the script
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
	Code       string
	Message    string
	Delivery   string
	Receipt    *Receipt    // nil until authorized
	Completion *Completion // nil unless observed
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

// Progress reports a running script.
type Progress struct {
	ElapsedMS   int64
	StdoutBytes int
	StderrBytes int
}
