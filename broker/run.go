package broker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/helper/job"
)

// stopGrace is how long a stopped helper has to send its last record.
const stopGrace = 3 * time.Second

// run is a run waiting for its helper's SPAWN connection.
type run struct {
	id    string
	e     *enroll.Enrollment
	spawn chan *spawnConn
}

type spawnConn struct {
	conn *net.UnixConn
	r    *bufio.Reader
}

// spawn hands a helper's connection to the run waiting for it, or cancels
// the helper when no run waits (a late answer, another process, a replaced
// enrollment).
func (b *Broker) spawn(conn *net.UnixConn, r *bufio.Reader, peer peercred.Peer, eid, runID string) {
	peer.Close()
	b.mu.Lock()
	rn := b.runs[runID]
	ok := rn != nil && rn.e.ID == eid && !rn.e.Lost() && peer.PID == rn.e.PID &&
		peercred.ProcessGeneration(b.bootID, peer.PID, peer.StartTime) == rn.e.ProcessGeneration
	if ok {
		delete(b.runs, runID)
	}
	b.mu.Unlock()
	if !ok {
		job.WriteCancel(conn)
		conn.Close()
		return
	}
	rn.spawn <- &spawnConn{conn: conn, r: r}
}

// Run authorizes, dispatches and observes one script. It never returns an
// error: every outcome, failures included, is an Outcome that says how far
// the request got.
func (b *Broker) Run(ctx context.Context, req Request) Outcome {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return refuse(CodeBrokerUnavailable, "the tmux_run broker is shutting down")
	}
	b.runWG.Add(1)
	b.mu.Unlock()
	defer b.runWG.Done()
	e, state := b.cfg.Registry.Lookup(req.Pane)
	if state == enroll.StateNone || state == enroll.StateInvited {
		return refuse(CodeNotEnrolled, fmt.Sprintf("pane %s is not enrolled (%s); a person must source its setup file in that pane's zsh (send the server SIGHUP for a fresh invitation); list_panes shows enrollment", req.Pane, state))
	}
	p, gen, err := b.pane(ctx, req.Pane)
	switch {
	case errors.Is(err, errNoPane):
		return refuse(CodeEnrollmentLost, fmt.Sprintf("pane %s no longer exists, so its enrolled shell is gone; enroll another pane", req.Pane))
	case err != nil:
		return refuse(CodeBrokerUnavailable, fmt.Sprintf("cannot read pane %s from tmux: %v", req.Pane, err))
	}
	if req.Generation != gen {
		return refuse(CodeStaleGeneration, fmt.Sprintf("target generation %q is not the server's current generation %q; call list_panes and use its serverGeneration", req.Generation, gen))
	}
	switch {
	case p.PID != e.PID:
		return refuse(CodeProcessChanged, fmt.Sprintf("pane %s now runs process %d, not the enrolled shell %d (respawned?); a person must enroll the new shell", req.Pane, p.PID, e.PID))
	case p.Dead:
		return refuse(CodePaneDead, fmt.Sprintf("pane %s is dead", req.Pane))
	case state == enroll.StateLost || e.Lost():
		return refuse(CodeEnrollmentLost, fmt.Sprintf("the enrolled shell of pane %s exited or unenrolled; send the server SIGHUP to invite the pane again", req.Pane))
	}
	if start, err := peercred.StartTime(e.PID); err != nil || peercred.ProcessGeneration(b.bootID, e.PID, start) != e.ProcessGeneration {
		return refuse(CodeProcessChanged, fmt.Sprintf("process %d of pane %s is no longer the enrolled shell", e.PID, req.Pane))
	}
	sh := b.shellFor(req.Pane)
	if sh == nil || sh.e != e {
		return refuse(CodeEnrollmentLost, fmt.Sprintf("the enrolled shell of pane %s closed its connection", req.Pane))
	}
	if !b.reserve(req.Pane) {
		return refuse(CodeRunInProgress, fmt.Sprintf("pane %s already has a run in flight; wait for it to finish", req.Pane))
	}
	defer b.release(req.Pane)

	receipt := &Receipt{
		RunID: enroll.NewRunID(), ScriptDigest: job.Digest(req.Script), ServerGeneration: req.Generation,
		PaneID: req.Pane, EnrollmentGeneration: e.ID, ProcessGeneration: e.ProcessGeneration,
	}
	// Output buffers are reserved at their limits before authorization, so
	// a run that starts never fails for want of memory to hold its answer.
	out := Outcome{Delivery: NotSent, Stdout: make([]byte, 0, req.StdoutLimit), Stderr: make([]byte, 0, req.StderrLimit)}
	ok, err := enroll.Guard(ctx, b.cfg.Client, req.Pane, e.PID, receipt.RunID)
	if err != nil {
		return refuse(CodeBrokerUnavailable, fmt.Sprintf("the tmux authorization check failed: %v", err))
	}
	if !ok {
		return refuse(CodeProcessChanged, fmt.Sprintf("tmux no longer shows the enrolled shell %d alive in pane %s", e.PID, req.Pane))
	}
	out.Receipt = receipt
	return b.dispatch(ctx, sh, req, out)
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

// dispatch asks the shell to start the helper and waits for its answer and
// its SPAWN connection, each within the answer deadline.
func (b *Broker) dispatch(ctx context.Context, sh *shell, req Request, out Outcome) Outcome {
	id := out.Receipt.RunID
	rn := &run{id: id, e: sh.e, spawn: make(chan *spawnConn, 1)}
	b.mu.Lock()
	b.runs[id] = rn
	b.mu.Unlock()
	abandon := func() {
		b.mu.Lock()
		delete(b.runs, id)
		b.mu.Unlock()
		// A helper that connected just before the run gave up is told to
		// run nothing.
		select {
		case sc := <-rn.spawn:
			job.WriteCancel(sc.conn)
			sc.conn.Close()
		default:
		}
	}
	fail := func(code, msg string) Outcome {
		abandon()
		out.Code, out.Message = code, msg
		return out
	}
	for len(sh.replies) > 0 { // answers to abandoned runs
		<-sh.replies
	}
	if _, err := fmt.Fprintf(sh.conn, "%s %s\n", WordRun, id); err != nil {
		return fail(CodeEnrollmentLost, fmt.Sprintf("cannot reach the enrolled shell of pane %s: %v", req.Pane, err))
	}
	deadline := time.NewTimer(b.cfg.ShellAnswer)
	defer deadline.Stop()
	var spawned *spawnConn
	for started := false; spawned == nil || !started; {
		select {
		case msg := <-sh.replies:
			f := strings.Fields(msg)
			if len(f) < 2 || f[1] != id {
				continue
			}
			switch f[0] {
			case WordBusy:
				return fail(CodeShellBusy, fmt.Sprintf("the zsh in pane %s is not idle at an empty prompt (typed text, a continuation line or a menu); nothing was sent — ask the person, or try again once the line is empty", req.Pane))
			case WordFail:
				return fail(CodeSpawnFailed, fmt.Sprintf("the zsh in pane %s could not start the helper: %s; is the broker socket still there?", req.Pane, strings.Join(f[2:], " ")))
			case WordStarted:
				started = true
			}
		case spawned = <-rn.spawn:
		case <-deadline.C:
			if started {
				return fail(CodeSpawnFailed, fmt.Sprintf("the zsh in pane %s said it started the helper, but the helper never connected (is %s installed and runnable?)", req.Pane, "libtmux-mcp-helper"))
			}
			return fail(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s did not answer within %s: it is running a foreground program, not waiting at its prompt; nothing will run later — retry when the prompt is back", req.Pane, b.cfg.ShellAnswer))
		case <-sh.done:
			return fail(CodeEnrollmentLost, fmt.Sprintf("the enrolled shell of pane %s went away", req.Pane))
		case <-ctx.Done():
			return fail(CodeCancelled, "cancelled before the shell answered; nothing was sent")
		}
	}
	return b.execute(ctx, spawned, req, out)
}

// execute sends the job and reads the helper's records to the end.
func (b *Broker) execute(ctx context.Context, sc *spawnConn, req Request, out Outcome) Outcome {
	defer sc.conn.Close()
	j := job.Job{RunID: out.Receipt.RunID, Digest: out.Receipt.ScriptDigest, StdoutLimit: req.StdoutLimit, StderrLimit: req.StderrLimit, Script: req.Script}
	if err := job.WriteJob(sc.conn, j); err != nil {
		out.Code, out.Message = CodeSpawnFailed, fmt.Sprintf("cannot send the job to the helper: %v", err)
		return out
	}
	out.Delivery = PossiblySent
	records := make(chan job.Record)
	readErr := make(chan error, 1)
	quit := make(chan struct{}) // the reader ends with execute, whichever returns first
	defer close(quit)
	go func() {
		for {
			rec, err := job.ReadRecord(sc.r)
			if err != nil {
				readErr <- err
				return
			}
			select {
			case records <- rec:
			case <-quit:
				return
			}
			if rec.Final() {
				readErr <- nil
				return
			}
		}
	}()
	began := time.Now()
	timeout := time.NewTimer(b.cfg.RunTimeout)
	defer timeout.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stopCode := ""
	var grace <-chan time.Time
	stop := func(code string) {
		if stopCode == "" {
			stopCode = code
			job.WriteStop(sc.conn)
			grace = time.After(stopGrace)
		}
	}
	for {
		select {
		case rec := <-records:
			switch rec.Kind {
			case job.KindStarted:
				out.Delivery = Observed
			case job.KindStdout:
				out.Stdout = append(out.Stdout, rec.Data...)
			case job.KindStderr:
				out.Stderr = append(out.Stderr, rec.Data...)
			}
			if len(out.Stdout) > req.StdoutLimit || len(out.Stderr) > req.StderrLimit {
				// The helper enforces the limits; a helper that does not is
				// stopped and not believed.
				stop(CodeOutputOverflow)
			}
			if rec.Final() {
				return b.finish(out, rec, stopCode, req)
			}
		case err := <-readErr:
			if err == nil {
				continue
			}
			out.Code = CodeHelperFailed
			out.Message = fmt.Sprintf("the helper went away before reporting how the script ended (%v); it may have run", err)
			if stopCode == CodeCancelled || stopCode == CodeTimedOut {
				out.Code, out.Message = stopCode, stopMessage(stopCode, b.cfg.RunTimeout)
			}
			out.Stdout, out.Stderr = nil, nil
			return out
		case <-tick.C:
			if req.Progress != nil && stopCode == "" {
				req.Progress(Progress{ElapsedMS: time.Since(began).Milliseconds(), StdoutBytes: len(out.Stdout), StderrBytes: len(out.Stderr)})
			}
		case <-timeout.C:
			stop(CodeTimedOut)
		case <-ctx.Done():
			stop(CodeCancelled)
			ctx = context.Background() // fire once
		case <-grace:
			out.Code, out.Message = stopCode, stopMessage(stopCode, b.cfg.RunTimeout)+"; the helper did not confirm the stop"
			out.Stdout, out.Stderr = nil, nil
			return out
		}
	}
}

// finish turns the helper's final record into the outcome.
func (b *Broker) finish(out Outcome, rec job.Record, stopCode string, req Request) Outcome {
	switch rec.Kind {
	case job.KindExited:
		out.Completion = &Completion{Status: rec.Status}
	case job.KindSignaled:
		out.Completion = &Completion{Signaled: true, Signal: rec.Signal}
	case job.KindOverflow:
		limit := req.StdoutLimit
		if rec.Stream == job.StreamStderr {
			limit = req.StderrLimit
		}
		out.Code = CodeOutputOverflow
		out.Message = fmt.Sprintf("the script wrote more than %d bytes to %s, so it was stopped; raise %s_limit (at most %d) or write less", limit, rec.Stream, rec.Stream, job.MaxOutput)
	case job.KindStopped:
		out.Code = stopCode
		if out.Code == "" {
			out.Code = CodeHelperFailed
		}
		out.Message = stopMessage(out.Code, b.cfg.RunTimeout)
	case job.KindFailed:
		out.Code = CodeHelperFailed
		out.Message = "the helper refused the job: " + rec.Reason
		if rec.Reason == job.ReasonSpawn || rec.Reason == job.ReasonDigestMismatch || rec.Reason == job.ReasonBadJob || rec.Reason == job.ReasonRunIDMismatch {
			out.Delivery = NotSent
		}
	}
	if out.Completion != nil && stopCode != "" && stopCode != CodeOutputOverflow {
		// The script ended on its own or from the stop; either way the end
		// was observed, but the call still reports why it was stopped.
		out.Code, out.Message = stopCode, stopMessage(stopCode, b.cfg.RunTimeout)
	}
	if out.Code != "" && out.Completion == nil {
		out.Stdout, out.Stderr = nil, nil
	}
	return out
}

func stopMessage(code string, timeout time.Duration) string {
	switch code {
	case CodeTimedOut:
		return fmt.Sprintf("the script ran past the run timeout (%s) and its process group was stopped; descendants that left the group may still run", timeout)
	case CodeCancelled:
		return "the call was cancelled and the script's process group was stopped; descendants that left the group may still run"
	}
	return "the helper stopped the script before it completed"
}
