package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/helper/job"
	"github.com/libtmux/libtmux-mcp/internal/panerecord"
)

// refusal is why a run does not go ahead (or stops): one of the documented codes, a message,
// and the step that helps when the caller is to name it. It is the one way this package's steps
// say no.
type refusal struct {
	code     Code
	msg      string
	recovery Recovery
	// promptClosed: ask could not write on the prompt's connection, which the shell had
	// closed; nothing was sent (askPrompt asks the next prompt).
	promptClosed bool
}

// refused is a refusal whose message names the next step itself.
func refused(code Code, msg string) *refusal { return &refusal{code: code, msg: msg} }

// shellGone is enrollment_lost with a message that says only what happened: the caller names
// how the pane is invited again (RecoveryReinvite).
func shellGone(msg string) *refusal {
	return &refusal{code: CodeEnrollmentLost, msg: msg, recovery: RecoveryReinvite}
}

// outcome is the refusal of a run that never left the broker.
func (r *refusal) outcome() Outcome {
	return Outcome{Code: r.code, Message: r.msg, Delivery: NotSent, Recovery: r.recovery}
}

// Run authorizes, dispatches and observes one script. It never returns an
// error: every outcome, failures included, is an Outcome that says how far
// the request got.
func (b *Broker) Run(ctx context.Context, req Request) Outcome {
	if !b.enter() {
		return refused(CodeBrokerUnavailable, "the tmux_run broker is shutting down").outcome()
	}
	defer b.runWG.Done()
	e, sh, bad := b.admit(ctx, req)
	if bad != nil {
		return *bad
	}
	if !b.reserve(req.Pane) {
		return refused(CodeRunInProgress, fmt.Sprintf("pane %s already has a run in flight; wait for it to finish", req.Pane)).outcome()
	}
	defer b.release(req.Pane)
	claim, r := b.claim(req)
	if r != nil {
		return r.outcome()
	}
	defer claim.Release()

	// Output buffers are reserved at their limits before authorization, so
	// a run that starts never fails for want of memory to hold its answer.
	out := Outcome{Delivery: NotSent, Stdout: make([]byte, 0, req.StdoutLimit), Stderr: make([]byte, 0, req.StderrLimit)}
	out.Receipt = newReceipt(req, e)
	start := time.Now()
	out = b.dispatch(ctx, sh, req, out)
	b.remember(req.Pane, start, req.Script, out)
	return out
}

// enter counts a call in flight (runWG) unless the broker is closing.
func (b *Broker) enter() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.runWG.Add(1)
	return true
}

// admit checks req and authorizes it against the pane's enrollment: the enrollment and its
// shell, or the refusal (an Outcome that was never sent).
func (b *Broker) admit(ctx context.Context, req Request) (*enroll.Enrollment, *shell, *Outcome) {
	if bad, ok := req.Check(); !ok {
		return nil, nil, &bad
	}
	no := func(r *refusal) (*enroll.Enrollment, *shell, *Outcome) {
		out := r.outcome()
		return nil, nil, &out
	}
	e, state := b.cfg.Registry.Lookup(req.Pane)
	if state == enroll.StateNone || state == enroll.StateInvited {
		r := refused(CodeNotEnrolled, fmt.Sprintf("pane %s is not enrolled (%s); a person enrolls it by typing eval \"$(libtmux-mcp enroll)\" in that pane's zsh; list_panes shows enrollment", req.Pane, state))
		r.recovery = RecoveryEnroll
		return no(r)
	}
	sh := b.shellFor(req.Pane)
	if sh == nil || sh.e != e {
		sh = b.awaitShell(ctx, req.Pane, e)
	}
	st, stErr := peercred.ReadStat(e.PID) // read once, for both checks below
	if sh != nil && sh.e == e && stErr == nil && sh.execd(st) {
		b.lose(sh, "the shell exec'd another program")
		return no(shellGone(fmt.Sprintf("the enrolled shell of pane %s exec'd another program (its process is the same, its program is not)", req.Pane)))
	}
	if stErr != nil || !b.authorizedFast(e, state, sh, req, st) {
		// Something is off, or cannot be known without tmux: ask tmux, once, and answer the
		// exact code.
		if r := b.authorizeSlow(ctx, e, state, req); r != nil {
			return no(r)
		}
	}
	if sh == nil || sh.e != e {
		return no(shellGone(fmt.Sprintf("the enrolled shell of pane %s closed its connection", req.Pane)))
	}
	return e, sh, nil
}

// newReceipt is the authorization of a new run of req on enrollment e.
func newReceipt(req Request, e *enroll.Enrollment) *Receipt {
	return &Receipt{
		RunID: enroll.NewRunID(), ScriptDigest: job.Digest(req.Script), ServerGeneration: req.Generation,
		PaneID: req.Pane, EnrollmentGeneration: e.ID, ProcessGeneration: e.ProcessGeneration,
	}
}

// claim takes req's pane's claim that every libtmux-mcp process sees, for the foreground run:
// run_shell_command from any process is then refused on the pane until the run ends. nil
// without claims (or when taking one failed for another reason than a holder: logged).
func (b *Broker) claim(req Request) (*panerecord.Claim, *refusal) {
	if b.claims == nil {
		return nil, nil
	}
	c, err := b.claims.Take(req.Pane, panerecord.Holder{Tool: "tmux_run", Command: string(req.Script)})
	var busy *panerecord.BusyError
	switch {
	case errors.As(err, &busy):
		return nil, refused(CodeRunInProgress, fmt.Sprintf("%v; one command runs per pane at a time, whichever process started it: wait for it to finish, or use another pane", busy))
	case err != nil:
		b.cfg.Log.Warn("tmux_run: the pane's claim could not be taken; the run is held in this broker only", "pane", req.Pane, "err", err)
		return nil, nil
	}
	if c.Gone != nil {
		b.cfg.Log.Info("tmux_run: took over a pane claim whose holder is gone", "pane", req.Pane, "holder", c.Gone.String())
	}
	return c, nil
}

func (b *Broker) reserve(pane string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy[pane] {
		return false
	}
	b.busy[pane] = true
	return true
}

func (b *Broker) release(pane string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.busy, pane)
}
