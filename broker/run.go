package broker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/helper/job"
)

// stopGrace is how long a stopped helper has to send its last record.
const stopGrace = 3 * time.Second

// run is a run waiting for its new helper's SPAWN connection.
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
	ok := rn != nil && rn.e.ID == eid && b.isEnrolledProcess(rn.e, peer)
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
	sh := b.shellFor(req.Pane)
	if !b.authorizedFast(e, state, sh, req) {
		// Something is off, or cannot be known without tmux: ask tmux, once, and answer the
		// exact code.
		if out, refused := b.authorizeSlow(ctx, e, state, req); refused {
			return out
		}
	}
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
	out.Receipt = receipt
	return b.dispatch(ctx, sh, req, out)
}

// authorizedFast decides without tmux that the run may go to the enrolled shell. It holds only
// when every fact the tmux check would read is known otherwise:
//   - the request names the server generation the enrollment belongs to, and the server's
//     socket is still the inode that server made (a server started after removing it would
//     not be);
//   - the enrolled process is alive and is the same process (pid and start time: its process
//     generation), and its parent is still that server's pid: a pane's process is the server's
//     child, and an orphan never gets its parent back, so the server has not died or been
//     replaced in between;
//   - it still has the pane's terminal as its controlling terminal: respawn-pane -k hangs the
//     old terminal up, which clears it even for a shell that survives;
//   - the enrollment is not lost (exit, unenroll, exec, replacement).
//
// A dead pane's process has exited, and a respawned pane's old process has lost its terminal or
// exited, so pane_dead and process_changed never pass here. Whatever fails sends the run to
// authorizeSlow, which reads tmux and answers the documented code.
func (b *Broker) authorizedFast(e *enroll.Enrollment, state string, sh *shell, req Request) bool {
	if state != enroll.StateEnrolled || e.Lost() || sh == nil || sh.e != e || sh.tty == 0 ||
		req.Generation != b.server.Generation || b.serverSock == nil {
		return false
	}
	if fi, err := os.Stat(b.server.SocketPath); err != nil || !os.SameFile(fi, b.serverSock) {
		return false
	}
	st, err := peercred.ReadStat(e.PID)
	return err == nil && st.State != 'Z' && st.State != 'X' && st.PPID == b.server.PID && st.TTY == sh.tty &&
		peercred.ProcessGeneration(b.bootID, e.PID, st.StartTime) == e.ProcessGeneration
}

// authorizeSlow reads the pane and the server generation from tmux in one call and checks them
// in the documented order. It reports refused with the refusal, or not refused when tmux shows
// the enrolled shell alive in its pane.
func (b *Broker) authorizeSlow(ctx context.Context, e *enroll.Enrollment, state string, req Request) (Outcome, bool) {
	p, gen, err := b.pane(ctx, req.Pane)
	switch {
	case errors.Is(err, errNoPane):
		return refuse(CodeEnrollmentLost, fmt.Sprintf("pane %s no longer exists, so its enrolled shell is gone; enroll another pane", req.Pane)), true
	case err != nil:
		return refuse(CodeBrokerUnavailable, fmt.Sprintf("cannot read pane %s from tmux: %v", req.Pane, err)), true
	}
	if req.Generation != gen {
		return refuse(CodeStaleGeneration, fmt.Sprintf("target generation %q is not the server's current generation %q; call list_panes and use its serverGeneration", req.Generation, gen)), true
	}
	switch {
	case p.PID != e.PID:
		return refuse(CodeProcessChanged, fmt.Sprintf("pane %s now runs process %d, not the enrolled shell %d (respawned?); a person must enroll the new shell", req.Pane, p.PID, e.PID)), true
	case p.Dead:
		return refuse(CodePaneDead, fmt.Sprintf("pane %s is dead", req.Pane)), true
	case state == enroll.StateLost || e.Lost():
		return refuse(CodeEnrollmentLost, fmt.Sprintf("the enrolled shell of pane %s exited, exec'd another program or unenrolled; send the server SIGHUP to invite the pane again", req.Pane)), true
	}
	if start, err := peercred.StartTime(e.PID); err != nil || peercred.ProcessGeneration(b.bootID, e.PID, start) != e.ProcessGeneration {
		return refuse(CodeProcessChanged, fmt.Sprintf("process %d of pane %s is no longer the enrolled shell", e.PID, req.Pane)), true
	}
	return Outcome{}, false
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

// dispatch asks the shell, on the connection of the prompt it shows, whether the run may start
// now (starting a resident helper first when it has none), and hands the job to the helper
// with the shell's directory, environment and umask of that moment.
func (b *Broker) dispatch(ctx context.Context, sh *shell, req Request, out Outcome) Outcome {
	id := out.Receipt.RunID
	fail := func(code, msg string) Outcome {
		out.Code, out.Message = code, msg
		return out
	}
	for attempt := 0; ; attempt++ {
		p, code, msg := b.prompt(ctx, sh)
		if code != "" {
			return fail(code, msg)
		}
		h := sh.useHelper()
		rep, spawned, code, msg := b.ask(ctx, sh, p, id, h == nil)
		if code != "" {
			return fail(code, msg)
		}
		// The shell agreed, so it is at its prompt now: what a command it ran set is final.
		attrs, err := peercred.ReadAttrs(sh.e.PID)
		if err != nil {
			if spawned != nil {
				job.WriteCancel(spawned.conn)
				spawned.conn.Close()
			}
			return fail(CodeEnrollmentLost, fmt.Sprintf("cannot read the enrolled shell's state: %v", err))
		}
		if spawned != nil {
			h = newResident(spawned, attrs, func(err error) {
				b.cfg.Log.Info("tmux_run resident helper ended; the next run starts another", slog.String("pane", sh.e.Pane), slog.Any("err", err))
			})
			sh.setHelper(h)
		} else if !h.attrs.SameInherited(attrs) && attempt == 0 {
			// ulimit or renice since the helper started: it cannot take them on, so a fresh one
			// does, started by the shell.
			sh.dropHelper(h)
			continue
		}
		b.stamp(req.Pane, sh.e.PID, id)
		dir := rep.dir
		if !filepath.IsAbs(dir) || len(dir) > job.MaxDir {
			dir = "/proc/" + strconv.Itoa(sh.e.PID) + "/cwd"
		} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			dir = "/proc/" + strconv.Itoa(sh.e.PID) + "/cwd" // $PWD was renamed or removed
		}
		j := job.Job{
			RunID: id, Digest: out.Receipt.ScriptDigest, StdoutLimit: req.StdoutLimit, StderrLimit: req.StderrLimit,
			Umask: attrs.Umask, Dir: dir, Env: environment(rep.env), Script: req.Script,
		}
		sh.setRunning(true)
		if err := job.WriteJob(h.conn, j); err != nil {
			sh.dropHelper(h)
			sh.setRunning(false)
			if spawned == nil && attempt == 0 {
				// The resident helper died between runs (its end was still closing when the run
				// began): nothing was sent; the shell, still at its prompt, starts another.
				continue
			}
			return fail(CodeSpawnFailed, fmt.Sprintf("cannot send the job to the helper: %v", err))
		}
		return b.execute(ctx, sh, h, req, out)
	}
}

// prompt returns the connection of the prompt the shell shows, or the code that says why there
// is none. A shell that runs a foreground job is refused at once; one that exec'd is lost. A
// shell in the foreground itself is at its prompt or about to be (its connection for it may be
// on its way) or runs a builtin such as read: it gets the answer deadline to attach.
func (b *Broker) prompt(ctx context.Context, sh *shell) (*prompt, string, string) {
	pane := sh.e.Pane
	notAtPrompt := fmt.Sprintf("the zsh in pane %s is running a command, not waiting at its prompt; nothing was sent and nothing will run later — retry when the prompt is back", pane)
	lost := fmt.Sprintf("the enrolled shell of pane %s exec'd another program or exited; send the server SIGHUP to invite the pane again", pane)
	p, attached := sh.promptOrWait()
	if p != nil {
		return p, "", ""
	}
	if sh.liveHungup() {
		b.lose(sh, "the shell exec'd another program or exited")
		return nil, CodeEnrollmentLost, lost
	}
	if sh.foregroundJob() {
		return nil, CodeNotAtPrompt, notAtPrompt
	}
	deadline := time.NewTimer(b.cfg.ShellAnswer)
	defer deadline.Stop()
	for {
		select {
		case <-attached:
			if p, attached = sh.promptOrWait(); p != nil {
				return p, "", ""
			}
		case <-deadline.C:
			if sh.liveHungup() {
				b.lose(sh, "the shell exec'd another program or exited")
				return nil, CodeEnrollmentLost, lost
			}
			return nil, CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s did not come back to its prompt within %s (a builtin such as read or vared, or a long prompt hook?); nothing was sent and nothing will run later — retry when the prompt is back", pane, b.cfg.ShellAnswer)
		case <-sh.done:
			return nil, CodeEnrollmentLost, fmt.Sprintf("the enrolled shell of pane %s went away", pane)
		case <-ctx.Done():
			return nil, CodeCancelled, "cancelled before the shell answered; nothing was sent"
		}
	}
}

// environment keeps the NAME=value entries of what the shell exported (zsh exports nothing
// else, but the job protocol refuses anything else outright).
func environment(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
			out = append(out, kv)
		}
	}
	return out
}

// ask writes RUN (or HELPER, when the shell must start a helper first) on the prompt connection
// and waits, within the answer deadline, for GO (and the new helper's SPAWN connection). A code
// means nothing was sent and nothing will run.
func (b *Broker) ask(ctx context.Context, sh *shell, p *prompt, id string, needHelper bool) (reply, *spawnConn, string, string) {
	pane := sh.e.Pane
	var rn *run
	word := WordRun
	if needHelper {
		word = WordHelper
		rn = &run{id: id, e: sh.e, spawn: make(chan *spawnConn, 1)}
		b.mu.Lock()
		b.runs[id] = rn
		b.mu.Unlock()
	}
	abandon := func() {
		if rn == nil {
			return
		}
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
	var spawned *spawnConn
	refuse := func(code, msg string) (reply, *spawnConn, string, string) {
		abandon()
		if spawned != nil { // the helper came, but the run does not go ahead
			job.WriteCancel(spawned.conn)
			spawned.conn.Close()
		}
		return reply{}, nil, code, msg
	}
	for len(p.replies) > 0 { // answers to abandoned runs
		<-p.replies
	}
	if _, err := fmt.Fprintf(p.conn, "%s %s\n", word, id); err != nil {
		return refuse(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s left its prompt (a command started); nothing was sent — retry when the prompt is back", pane))
	}
	deadline := time.NewTimer(b.cfg.ShellAnswer)
	defer deadline.Stop()
	var rep reply
	var spawnCh chan *spawnConn
	if rn != nil {
		spawnCh = rn.spawn
	}
	gone := p.gone
	for agreed := false; !agreed || (needHelper && spawned == nil); {
		select {
		case r := <-p.replies:
			if r.id != id {
				continue
			}
			switch r.word {
			case WordBusy:
				return refuse(CodeShellBusy, fmt.Sprintf("the zsh in pane %s is not idle at an empty prompt (typed text, a continuation line or a menu); nothing was sent — ask the person, or try again once the line is empty", pane))
			case WordFail:
				return refuse(CodeSpawnFailed, fmt.Sprintf("the zsh in pane %s could not start the helper: %s; is the broker socket still there?", pane, strings.Join(r.fields[2:], " ")))
			case WordGo:
				rep, agreed = r, true
			}
		case spawned = <-spawnCh:
			spawnCh = nil
		case <-gone:
			// After GO the shell may start a command at once; the helper may still come.
			gone = nil
			if !agreed {
				return refuse(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s left its prompt before it answered (a command started); nothing was sent — retry when the prompt is back", pane))
			}
		case <-deadline.C:
			if agreed {
				return refuse(CodeSpawnFailed, fmt.Sprintf("the zsh in pane %s said it started the helper, but the helper never connected (is libtmux-mcp-helper installed and runnable?)", pane))
			}
			return refuse(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s did not answer within %s: it is not waiting at its prompt; nothing was sent and nothing will run later — retry when the prompt is back", pane, b.cfg.ShellAnswer))
		case <-sh.done:
			return refuse(CodeEnrollmentLost, fmt.Sprintf("the enrolled shell of pane %s went away", pane))
		case <-ctx.Done():
			return refuse(CodeCancelled, "cancelled before the shell answered; nothing was sent")
		}
	}
	if rn != nil {
		b.mu.Lock()
		delete(b.runs, id)
		b.mu.Unlock()
	}
	return rep, spawned, "", ""
}

// execute reads the records of the job just sent to the resident helper (marked running) to
// the end. The helper stays for the next run unless something went wrong with it.
func (b *Broker) execute(ctx context.Context, sh *shell, h *resident, req Request, out Outcome) Outcome {
	keep := false
	defer func() {
		if !keep {
			sh.dropHelper(h)
		}
		sh.setRunning(false)
	}()
	out.Delivery = PossiblySent
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
			job.WriteStop(h.conn)
			grace = time.After(stopGrace)
		}
	}
	for {
		select {
		case rec := <-h.records:
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
				keep = stopCode != CodeOutputOverflow || rec.Kind == job.KindOverflow
				return b.finish(out, rec, stopCode, req)
			}
		case <-h.dead:
			out.Code = CodeHelperFailed
			out.Message = fmt.Sprintf("the helper went away before reporting how the script ended (%v); it may have run", h.err)
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
		if rec.Reason == job.ReasonSpawn || rec.Reason == job.ReasonDigestMismatch || rec.Reason == job.ReasonBadJob {
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
