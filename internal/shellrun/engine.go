package shellrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"github.com/libtmux/libtmux-mcp/internal/readbudget"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Outcome is how a run's wait ended.
type Outcome string

// The outcomes of a run, as answers publish them.
const (
	Completed   Outcome = "completed"   // the status line came: ExitStatus is set
	TimedOut    Outcome = "timed_out"   // the wait ended first; the command may still run
	Cancelled   Outcome = "cancelled"   // the request or the server ended the wait
	PaneDied    Outcome = "pane_died"   // the pane (or its server) went away first
	Interrupted Outcome = "interrupted" // the shell came back to its prompt without the status line
)

// Outcomes lists every Outcome, in the order above.
var Outcomes = []Outcome{Completed, TimedOut, Cancelled, PaneDied, Interrupted}

// Checked is what a passed protection check of a pane for a command saw,
// from one tmux call.
type Checked struct {
	Pane     tmux.Pane
	Snapshot tmux.Snapshot // the server, and its clients
}

// Watch wakes a wait when its pane may have changed (see Host.Watch).
type Watch struct {
	Wake  <-chan struct{}
	Ended <-chan struct{} // closed when the wake-ups stopped for good
	Stop  func()
	// Command runs one tmux command over the watch's control connection;
	// nil without one.
	Command func(ctx context.Context, args ...string) (string, error)
}

// Host is what the engine asks of the server it runs in: the decisions
// that are the server's (which panes may take a command, what a tmux
// failure tells the agent) and the views and watches it shares with its
// other waits.
type Host interface {
	// Check is the server's protection check of pane for a command,
	// through run (one tmux command list) or, when run is nil, a tmux
	// process. force is the request's override, passed through.
	Check(ctx context.Context, run func(ctx context.Context, args ...string) (string, error), pane, force string) (Checked, error)
	// Allowed reports whether the facts of a passed check that are this
	// process's own (not the caller's pane, no pending enrollment
	// invitation) still allow a command on pane of the tmux server
	// serverPID of generation.
	Allowed(pane string, serverPID int, generation string) bool
	// InputTo notes that input is about to go to pane; end is called once
	// it went or failed.
	InputTo(pane string) (end func())
	// Explain turns a tmux failure about pane into an error that names
	// the next step; other errors pass unchanged.
	Explain(ctx context.Context, err error, pane string) error
	// View returns pane's view, held (release when done) and kept for
	// Deps.ViewKeep; it fails when there can be none.
	View(ctx context.Context, pane string) (v *live.View, release func(), err error)
	// Watch wakes on changes that may end pane, in session.
	Watch(ctx context.Context, session, pane string) Watch
	// PaneRecords is the tmux server's pane records (claims and input),
	// shared with every other process; nil when this process keeps them to
	// itself.
	PaneRecords() *panerecord.Set
}

// Deps are what an Engine is built from.
type Deps struct {
	Host Host
	Tmux *tmux.Client
	// Live is the pool of views; nil when control mode is forbidden (runs
	// then take the process path and have no handles).
	Live *live.Pool
	// Life ends at shutdown: runs still followed stop being followed.
	Life context.Context
	Log  *slog.Logger // discarded when nil
	// Budget bounds the output an answer holds.
	Budget readbudget.Budget
	// ViewKeep is how long a run's answer is kept after it ended (as long
	// as the view that followed it).
	ViewKeep time.Duration
	// Attended is the server's attended mode (typing, watched or ignore):
	// with ignore, a person's client does not void a kept check.
	Attended string
}

// Engine runs framed commands in panes' shells, one per pane at a time,
// and keeps what the server typed into panes. Its zero value is not
// usable; make one with New.
type Engine struct {
	host     Host
	tmux     *tmux.Client
	live     *live.Pool
	life     context.Context
	log      *slog.Logger
	budget   readbudget.Budget
	viewKeep time.Duration
	attended string

	runs      runs
	guards    typingGuards
	unentered unentered
	typed     typedLog
	// interrupts: when this server last sent each pane C-c.
	interrupts interrupts
}

// New returns an engine for d.
func New(d Deps) *Engine {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Life == nil {
		d.Life = context.Background()
	}
	return &Engine{host: d.Host, tmux: d.Tmux, live: d.Live, life: d.Life, log: d.Log, budget: d.Budget, viewKeep: d.ViewKeep, attended: d.Attended}
}

// Request is one command to run in a pane, or (with Handle) one run to
// wait for again.
type Request struct {
	Pane    string
	Command string
	Handle  string
	Force   string // passed to Host.Check
	// Wait starts the call's wait: a context that ends at its deadline
	// (or with ctx), its length, and end, to call when the wait is over.
	Wait func(ctx context.Context) (wctx context.Context, length time.Duration, end func())
	// From is how many of the run's output lines a wait by Handle has
	// read already (a cursor's count): its output starts after them.
	From uint64
	// Clamped, when not "", is a note that the wait asked for was clamped;
	// the answer's note carries it.
	Clamped string
}

// Result is what a run's wait found.
type Result struct {
	Outcome      Outcome
	ExitStatus   *int // set when Outcome is Completed
	Output       []string
	DroppedLines int
	DroppedChars int
	Cursor       string // a capture_since cursor after the output
	Handle       string // to wait again, when the command may still run
	// Next counts the run's output lines through this answer's: the
	// cursor of the next wait for the run (FormatCursor).
	Next uint64
	Note string
}

// Run types in.Command, framed, into in.Pane's shell and waits for it. On
// the pane's view (Deps.Live) the frame is one subshell and its status
// comes from the pane's lines; without one, a wait-for process signals
// completion. A refusal (another run holds the pane, unentered input, no
// shell at its prompt, the protection check) is an error that names the
// next step.
func (e *Engine) Run(ctx context.Context, in Request) (Result, error) {
	var view *live.View
	if e.live != nil {
		view = e.live.Lookup(in.Pane)
	}
	if err := e.unentered.refusal(in.Pane, view); err != nil {
		return Result{}, err
	}
	run, busy := e.runs.claim(in.Pane, in.Command)
	if busy != nil {
		return Result{}, busyError(busy, e.live != nil)
	}
	run.release = func() {}
	took, err := e.claimAcross(run)
	if err != nil {
		e.runs.free(run, 0)
		return Result{}, err
	}
	res, err, ok := Result{}, error(nil), false
	if e.live != nil {
		res, err, ok = e.runOnView(ctx, in, run)
	}
	if !ok {
		res, err = e.runByProcess(ctx, in, run)
	}
	if err == nil && took != "" {
		res.Note = strings.TrimSuffix(took+"; "+res.Note, "; ")
	}
	return res, err
}

// claimAcross takes run's pane's claim that every process sees (see
// package panerecord), which run keeps until it is freed. took is a note
// when the claim was left by a holder that is gone. A failure to take it
// for another reason than another holder is logged, and the run goes on
// with this process's own claim.
func (e *Engine) claimAcross(run *shellRun) (took string, err error) {
	set := e.host.PaneRecords()
	if set == nil {
		return "", nil
	}
	h := panerecord.Holder{Tool: "run_shell_command", Command: run.command}
	if e.live != nil {
		h.Handle = run.handle
	}
	c, err := set.Take(run.pane, h)
	var busy *panerecord.BusyError
	switch {
	case errors.As(err, &busy):
		return "", fmt.Errorf("run_in_progress: %v; one command runs per pane at a time, whichever process typed it: wait for that run from the agent that started it, stop it with send_keys C-c, or use another pane", busy)
	case err != nil:
		e.log.Warn("the pane's claim could not be taken; this run is claimed in this process only", "pane", run.pane, "err", err)
		return "", nil
	}
	run.mu.Lock()
	run.claim = c
	run.mu.Unlock()
	if c.Gone != nil {
		took = fmt.Sprintf("pane %s was claimed by %s, which is gone; this run took the claim over", run.pane, *c.Gone)
	}
	return took, nil
}

// ended says why a wait context ended: "" while it has not, TimedOut at
// its deadline, Cancelled when the request or the server ended it.
func ended(wctx, ctx context.Context) Outcome {
	if wctx.Err() == nil {
		return ""
	}
	if ctx.Err() != nil {
		return Cancelled
	}
	return TimedOut
}
