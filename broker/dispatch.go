package broker

import (
	"bufio"
	"context"
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

// run is a run the shell was asked about, waiting for the shell's STATE connection and, when
// it was asked to start a helper, the helper's SPAWN connection.
type run struct {
	id     string
	e      *enroll.Enrollment
	helper bool // HELPER was asked: a SPAWN is expected
	state  chan reply
	spawn  chan *spawnConn
}

type spawnConn struct {
	conn *net.UnixConn
	r    *bufio.Reader
}

// spawn hands a helper's connection to the run waiting for it, or cancels
// the helper when no run waits (a late answer, another process, a replaced
// enrollment).
func (b *Broker) spawn(conn *net.UnixConn, r *bufio.Reader, src *onlyFrom, peer peercred.Peer, eid, runID string) {
	peer.Close()
	src.handOver() // from here on the helper writes (its records)
	b.mu.Lock()
	rn := b.runs[runID]
	taken := false
	if rn != nil && rn.helper && rn.e.ID == eid && b.isEnrolledProcess(rn.e, peer) {
		// Sent under the lock: once ask removed the run, nothing more arrives for it.
		select {
		case rn.spawn <- &spawnConn{conn: conn, r: r}:
			taken = true
		default: // a second SPAWN for the run
		}
	}
	b.mu.Unlock()
	if !taken {
		job.WriteCancel(conn)
		conn.Close()
	}
}

// dispatch asks the shell, on the connection of the prompt it shows, whether the run may start
// now (starting a resident helper first when it has none), and hands the job to the helper
// with the shell's directory, environment and umask of that moment.
func (b *Broker) dispatch(ctx context.Context, sh *shell, req Request, out Outcome) Outcome {
	id := out.Receipt.RunID
	fail := func(r *refusal) Outcome {
		out.Code, out.Message, out.Recovery = r.code, r.msg, r.recovery
		return out
	}
	for attempt := 0; ; attempt++ {
		rep, spawned, h, r := b.askPrompt(ctx, sh, id)
		if r != nil {
			return fail(r)
		}
		// The shell agreed, so it is at its prompt now: what a command it ran set is final.
		attrs, err := peercred.ReadAttrs(sh.e.PID)
		if err != nil {
			if spawned != nil {
				job.WriteCancel(spawned.conn)
				spawned.conn.Close()
			}
			return fail(shellGone(fmt.Sprintf("cannot read the enrolled shell's state: %v", err)))
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
		j := newJob(sh, rep, attrs, req, out.Receipt)
		sh.setRunning(true)
		if err := job.WriteJob(h.conn, j); err != nil {
			sh.dropHelper(h)
			sh.setRunning(false)
			if spawned == nil && attempt == 0 {
				// The resident helper died between runs (its end was still closing when the run
				// began): nothing was sent; the shell, still at its prompt, starts another.
				continue
			}
			return fail(refused(CodeSpawnFailed, fmt.Sprintf("cannot send the job to the helper: %v", err)))
		}
		return b.execute(ctx, sh, h, req, out)
	}
}

// maxClosedPrompts bounds how many prompts askPrompt moves past in one run.
const maxClosedPrompts = 3

// askPrompt asks the prompt the shell shows (prompt, then ask), with the resident helper of
// that moment (nil: the shell is asked to start one). A prompt whose connection the shell had
// closed before the broker read its end took nothing (ask could not write the RUN): the shell
// closes it in preexec, so a command started there, and the next prompt may already be on its
// way (a command that ended at once). That prompt is forgotten and the next one asked, within
// prompt's deadline; a command still running is refused by prompt at once.
func (b *Broker) askPrompt(ctx context.Context, sh *shell, id string) (reply, *spawnConn, *resident, *refusal) {
	for closed := 0; ; closed++ {
		p, r := b.prompt(ctx, sh)
		if r != nil {
			return reply{}, nil, nil, r
		}
		h := sh.useHelper()
		rep, spawned, r := b.ask(ctx, sh, p, id, h == nil)
		if r != nil && r.promptClosed && closed < maxClosedPrompts {
			sh.detach(p)
			continue
		}
		return rep, spawned, h, r
	}
}

// newJob is the job of req for the helper, with the shell's directory, environment and umask
// at the moment it agreed (rep, attrs).
func newJob(sh *shell, rep reply, attrs peercred.Attrs, req Request, r *Receipt) job.Job {
	dir := rep.dir
	if !filepath.IsAbs(dir) || len(dir) > job.MaxDir {
		dir = "/proc/" + strconv.Itoa(sh.e.PID) + "/cwd"
	} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = "/proc/" + strconv.Itoa(sh.e.PID) + "/cwd" // $PWD was renamed or removed
	}
	return job.Job{
		RunID: r.RunID, Digest: r.ScriptDigest, StdoutLimit: req.StdoutLimit, StderrLimit: req.StderrLimit,
		Umask: attrs.Umask, Dir: dir, Env: environment(rep.env), Script: req.Script,
	}
}

// prompt returns the connection of the prompt the shell shows, or the refusal that says why
// there is none. A shell that runs a foreground job is refused at once; one that exec'd is lost. A
// shell in the foreground itself is at its prompt or about to be (its connection for it may be
// on its way) or runs a builtin such as read: it gets the answer deadline to attach.
func (b *Broker) prompt(ctx context.Context, sh *shell) (*prompt, *refusal) {
	pane := sh.e.Pane
	notAtPrompt := fmt.Sprintf("the zsh in pane %s is running a command, not waiting at its prompt; nothing was sent and nothing will run later — retry when the prompt is back", pane)
	lost := fmt.Sprintf("the enrolled shell of pane %s exec'd another program or exited; send the server SIGHUP to invite the pane again", pane)
	// A foreground job means no prompt, whatever connection seems attached: a child that
	// inherited the prompt's connection keeps it open after the shell closed its copy.
	if sh.foregroundJob() {
		return nil, refused(CodeNotAtPrompt, notAtPrompt)
	}
	p, attached := sh.promptOrWait()
	if p != nil {
		return p, nil
	}
	if sh.liveHungup() {
		b.lose(sh, "the shell exec'd another program or exited")
		return nil, refused(CodeEnrollmentLost, lost)
	}
	deadline := time.NewTimer(b.cfg.ShellAnswer)
	defer deadline.Stop()
	for {
		select {
		case <-attached:
			if p, attached = sh.promptOrWait(); p != nil {
				return p, nil
			}
		case <-deadline.C:
			if sh.liveHungup() {
				b.lose(sh, "the shell exec'd another program or exited")
				return nil, refused(CodeEnrollmentLost, lost)
			}
			return nil, refused(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s did not come back to its prompt within %s (a builtin such as read or vared, or a long prompt hook?); nothing was sent and nothing will run later — retry when the prompt is back", pane, b.cfg.ShellAnswer))
		case <-sh.done:
			return nil, shellGone(fmt.Sprintf("the enrolled shell of pane %s went away", pane))
		case <-ctx.Done():
			return nil, refused(CodeCancelled, "cancelled before the shell answered; nothing was sent")
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
// and waits, within the answer deadline, for GO (and the new helper's SPAWN connection). A
// refusal means nothing was sent and nothing will run.
func (b *Broker) ask(ctx context.Context, sh *shell, p *prompt, id string, needHelper bool) (reply, *spawnConn, *refusal) {
	pane := sh.e.Pane
	word := WordRun
	if needHelper {
		word = WordHelper
	}
	rn := &run{id: id, e: sh.e, helper: needHelper, state: make(chan reply, 1), spawn: make(chan *spawnConn, 1)}
	b.mu.Lock()
	b.runs[id] = rn
	b.mu.Unlock()
	var spawned *spawnConn
	abort := func(r *refusal) (reply, *spawnConn, *refusal) {
		b.endAsk(rn)
		if spawned != nil { // the helper came, but the run does not go ahead
			job.WriteCancel(spawned.conn)
			spawned.conn.Close()
		}
		return reply{}, nil, r
	}
	for len(p.replies) > 0 { // answers to abandoned runs
		<-p.replies
	}
	if _, err := fmt.Fprintf(p.conn, "%s %s\n", word, id); err != nil {
		r := refused(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s left its prompt (a command started); nothing was sent — retry when the prompt is back", pane))
		r.promptClosed = true
		return abort(r)
	}
	deadline := time.NewTimer(b.cfg.ShellAnswer)
	defer deadline.Stop()
	var state *reply
	stateCh, spawnCh := rn.state, rn.spawn
	gone := p.gone
	// The shell agrees with GO on the prompt's connection after it sent its STATE on a
	// connection of its own (see state.go) and, for HELPER, started the helper: the run waits
	// for all three, whichever comes first.
	for agreed := false; !agreed || state == nil || (needHelper && spawned == nil); {
		select {
		case r := <-p.replies:
			if r.id != id {
				continue
			}
			switch r.word {
			case WordBusy:
				return abort(refused(CodeShellBusy, fmt.Sprintf("the zsh in pane %s is not idle at an empty prompt (typed text, a continuation line or a menu); nothing was sent — ask the person, or try again once the line is empty", pane)))
			case WordFail:
				return abort(refused(CodeSpawnFailed, failMessage(pane, r.fields[2:])))
			case WordGo:
				agreed = true
			}
		case r := <-stateCh:
			state, stateCh = &r, nil
		case spawned = <-spawnCh:
			spawnCh = nil
		case <-gone:
			// After GO the shell may start a command at once; its state and the helper may
			// still be on their way.
			gone = nil
			if !agreed {
				return abort(refused(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s left its prompt before it answered (a command started); nothing was sent — retry when the prompt is back", pane)))
			}
		case <-deadline.C:
			if agreed && state == nil {
				return abort(refused(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s was said to agree, but its directory and environment never came from the shell itself (another process holding the prompt's connection may have answered for it); nothing was sent — retry when the prompt is back", pane)))
			}
			if agreed {
				return abort(refused(CodeSpawnFailed, fmt.Sprintf("the zsh in pane %s said it started the helper, but the helper never connected (is libtmux-mcp-helper installed and runnable?)", pane)))
			}
			return abort(refused(CodeNotAtPrompt, fmt.Sprintf("the zsh in pane %s did not answer within %s: it is not waiting at its prompt; nothing was sent and nothing will run later — retry when the prompt is back", pane, b.cfg.ShellAnswer)))
		case <-sh.done:
			return abort(shellGone(fmt.Sprintf("the enrolled shell of pane %s went away", pane)))
		case <-ctx.Done():
			return abort(refused(CodeCancelled, "cancelled before the shell answered; nothing was sent"))
		}
	}
	b.endAsk(rn)
	return *state, spawned, nil
}

// endAsk ends the wait for rn's connections: a helper that connected for it and was not
// taken (the run gave up, or a second SPAWN) is told to run nothing.
func (b *Broker) endAsk(rn *run) {
	b.mu.Lock()
	delete(b.runs, rn.id)
	b.mu.Unlock()
	select {
	case sc := <-rn.spawn:
		job.WriteCancel(sc.conn)
		sc.conn.Close()
	default:
	}
}

// failMessage is the refusal's message for the shell's FAIL <run_id> <reason>.
func failMessage(pane string, reason []string) string {
	switch strings.Join(reason, " ") {
	case FailConnect:
		return fmt.Sprintf("the zsh in pane %s could not open a connection to the broker's socket; is it still there? Nothing was sent", pane)
	case FailSpawn:
		return fmt.Sprintf("the zsh in pane %s could not start the helper (fork failed?); nothing was sent", pane)
	}
	return fmt.Sprintf("the zsh in pane %s could not start the run: %s; nothing was sent", pane, strings.Join(reason, " "))
}
