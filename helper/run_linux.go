//go:build linux

package helper

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/libtmux/libtmux-mcp/helper/job"
)

func init() { serve = serveLinux }

const (
	// requestTimeout bounds the wait for the broker's first message once the helper has started.
	requestTimeout = 10 * time.Second
	// killGrace is how long the script's process group has between SIGTERM and SIGKILL when it is
	// stopped: long enough for a trap to clean up, short enough that a stop ends well within 2 s.
	killGrace = 500 * time.Millisecond
	// drainDelay is the command's WaitDelay. It bounds two waits: after a stop, how long os/exec
	// waits before it SIGKILLs the sh itself (equal to killGrace, so the sh gets the whole grace);
	// and after the sh exits on its own, how long its pipes are still read while a background
	// descendant holds them open. Then the pipes are closed: whatever that descendant writes later
	// is lost (it gets SIGPIPE), and the completion reported is still the sh's.
	drainDelay = killGrace
	// groupPoll is how often a stopping group is checked for being gone before the grace ends.
	groupPoll = 20 * time.Millisecond
	// idleRelease is how long after a job the helper returns its free memory to the system.
	idleRelease = time.Second
)

// message is one thing read from the broker, or the error that ended reading.
type message struct {
	kind job.MessageKind
	job  job.Job
	err  error
}

// readBroker reads the broker's messages until the connection fails or ends, which it reports
// as a last message with err set before closing msgs.
func readBroker(in *bufio.Reader, msgs chan<- message) {
	defer close(msgs)
	for {
		kind, j, err := job.ReadMessage(in)
		msgs <- message{kind: kind, job: j, err: err}
		if err != nil {
			return
		}
	}
}

func serveLinux() int {
	// Every script is started from this goroutine, locked to the main thread for the helper's
	// life: the parent-death signal below belongs to the thread that forked, and the main
	// thread ends only with the process.
	runtime.LockOSThread()
	// Nothing the helper inherited above stderr may reach a script: mark every such descriptor
	// close-on-exec. close_range needs Linux 5.11; on older kernels only fd 3 is handled (below).
	_ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	// fd 3 becomes close-on-exec (so a script cannot forge records) and non-blocking (so os
	// registers it with the poller). No package net: the helper stays static and starts fast.
	unix.CloseOnExec(3)
	if _, err := unix.GetsockoptInt(3, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
		fmt.Fprintf(os.Stderr, "libtmux-mcp-helper: fd 3 is not a connection to the broker: %v\n", err)
		return exitFailure
	}
	if err := unix.SetNonblock(3, true); err != nil {
		fmt.Fprintf(os.Stderr, "libtmux-mcp-helper: fd 3: %v\n", err)
		return exitFailure
	}
	conn := os.NewFile(3, "broker connection")
	defer conn.Close()

	// Leave the enrolled shell's session and process group: scripts must not share the person's
	// terminal session, and signals to the shell's group must not reach them. EPERM means the
	// helper leads a process group already (the shell's double fork prevents that).
	if _, err := unix.Setsid(); err != nil && err != unix.EPERM {
		return fail(conn, job.ReasonInternal)
	}
	// Hold no directory busy between runs: each job names its own.
	_ = os.Chdir("/")
	// A resident helper waits in every enrolled pane: a small heap target keeps it small while
	// it works (its garbage per run is a few KiB, so collections stay rare and short).
	debug.SetGCPercent(25)

	// Handling these signals does two things. A script's sh gets them at their default
	// disposition: a Go program started with SIGINT or SIGHUP ignored (as a zsh background job
	// is, for SIGINT) keeps them ignored unless it handles them, and an exec'd child inherits
	// ignored signals, while every signal the Go runtime handles is reset to the default in the
	// child between fork and exec. (The runtime always handles SIGQUIT, SIGTERM and SIGPIPE.)
	// And a helper told to terminate stops its script as it would for STOP, and exits.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGINT, unix.SIGHUP, unix.SIGTERM)

	msgs := make(chan message)
	go readBroker(bufio.NewReader(conn), msgs)
	first := time.NewTimer(requestTimeout)
	defer first.Stop()
	// An idle helper gives its memory back: it waits in every enrolled pane, often for long.
	idle := time.AfterFunc(time.Hour, debug.FreeOSMemory)
	idle.Stop()
	defer idle.Stop()
	for {
		var m message
		select {
		case m = <-msgs:
			idle.Stop()
		case <-first.C:
			return fail(conn, job.ReasonBadJob)
		case <-sigs:
			return exitOK
		}
		first.Stop()
		switch {
		case errors.Is(m.err, job.ErrMalformed):
			return fail(conn, job.ReasonBadJob)
		case m.err != nil: // the broker went away
			return exitOK
		case m.kind == job.MessageCancel:
			return exitOK
		case m.kind == job.MessageStop:
			continue // nothing runs: a late STOP
		case job.Digest(m.job.Script) != m.job.Digest:
			if err := job.WriteRecord(conn, job.Record{Kind: job.KindFailed, Reason: job.ReasonDigestMismatch}); err != nil {
				return exitFailure
			}
			continue
		}
		r := &runner{conn: conn, ready: make(chan struct{})}
		if !r.run(m.job, msgs, sigs) {
			if r.unsent.Load() {
				return exitFailure // the broker could not be told
			}
			return exitOK
		}
		idle.Reset(idleRelease)
	}
}

// fail reports a failure that ends the helper and returns the exit status.
func fail(conn io.Writer, reason string) int {
	_ = job.WriteRecord(conn, job.Record{Kind: job.KindFailed, Reason: reason})
	return exitFailure
}

// runner runs one job's script and reports it on conn.
type runner struct {
	conn    *os.File
	mu      sync.Mutex         // serializes records on conn
	scratch []byte             // the record being written, reused (under mu)
	cancel  context.CancelFunc // stops the script (through cmd.Cancel), once it has started
	group   *groupStop         // set before ready is closed

	// ready is closed once started has been sent. Output is read from the moment the sh starts;
	// limitWriter waits for ready, so no output record precedes started and r.group is set
	// before anything can stop it.
	ready chan struct{}

	// stopped is set when os/exec calls cmd.Cancel: the stop took effect before the sh's exit was
	// observed, so no completion is claimed.
	stopped atomic.Bool
	// broken is set when the helper cannot go on after this job: the broker went away or broke
	// the protocol, a record could not be written, or the helper was told to terminate.
	broken atomic.Bool
	// unsent is set when a record could not be written.
	unsent atomic.Bool

	overflowMu sync.Mutex
	overflow   string // the first stream that passed its limit
}

// run starts one job's script, streams its output and writes the final record. It reports
// whether the helper can serve another job.
func (r *runner) run(j job.Job, msgs <-chan message, sigs <-chan os.Signal) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.cancel = cancel

	// The script sees the enrolled shell's state at the moment the shell agreed to this run: its
	// directory, exported environment and umask come with the job (resource limits and niceness
	// were inherited when the shell started this helper; the broker replaces a helper whose
	// limits no longer match the shell's). A nil Stdin is /dev/null.
	unix.Umask(j.Umask)
	// "--": a script that begins with - or + is the script, never options of sh.
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "--", string(j.Script))
	cmd.Dir = j.Dir
	cmd.Env = append([]string{}, j.Env...) // never nil: nil would mean the helper's own
	cmd.Stdout = &limitWriter{r: r, kind: job.KindStdout, stream: job.StreamStdout, limit: j.StdoutLimit}
	cmd.Stderr = &limitWriter{r: r, kind: job.KindStderr, stream: job.StreamStderr, limit: j.StderrLimit}
	// The sh leads a process group of its own, so a stop reaches its descendants and never the
	// helper. A group can outlive its leader: the stop signals the group, not the sh.
	// Pdeathsig: a helper killed before the broker learned the group (its started record still
	// unsent) takes the sh with it, so a script never runs on with nobody to stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// os/exec calls Cancel when ctx is done before it has seen the sh exit (STOP, EOF, a signal to
	// the helper, an overflow, a lost broker). TERM lets the script clean up; groupStop escalates
	// to KILL after killGrace, for the whole group, since os/exec's own kill at WaitDelay reaches
	// only the sh.
	cmd.Cancel = func() error {
		r.stopped.Store(true)
		r.group.stop()
		return nil
	}
	cmd.WaitDelay = drainDelay

	if err := cmd.Start(); err != nil {
		return r.send(job.Record{Kind: job.KindFailed, Reason: job.ReasonSpawn}) == nil
	}
	pid := cmd.Process.Pid
	r.group = &groupStop{pgid: pid, done: make(chan struct{})}
	_ = r.send(job.Record{Kind: job.KindStarted, PID: pid, PGID: pid})
	close(r.ready)

	// The watcher ends before the final record is written: the broker sends its next job only
	// after that record, so the watcher never takes it.
	watching := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case m := <-msgs:
				if m.err != nil || m.kind != job.MessageStop {
					r.broken.Store(true) // EOF, a broken stream, or a job while one runs
				}
				cancel()
				if m.err != nil {
					return // msgs is closed now
				}
			case <-sigs:
				r.broken.Store(true)
				cancel()
			case <-watching:
				return
			}
		}
	}()

	// The error adds nothing to cmd.ProcessState: a nonzero status or a signal is an ExitError,
	// ErrWaitDelay means output pipes were still held open by a descendant after the sh exited,
	// and a cancellation is already known to r.
	_ = cmd.Wait()
	r.group.wait()
	close(watching)
	<-watched

	final := r.final(cmd.ProcessState)
	if err := r.send(final); err != nil {
		return false
	}
	return !r.broken.Load()
}

// final decides the final record once the sh has been waited for.
func (r *runner) final(state *os.ProcessState) job.Record {
	r.overflowMu.Lock()
	overflow := r.overflow
	r.overflowMu.Unlock()
	switch {
	case overflow != "":
		// Output was dropped: never report a completion over truncated output.
		return job.Record{Kind: job.KindOverflow, Stream: overflow}
	case r.stopped.Load():
		return job.Record{Kind: job.KindStopped}
	case state == nil:
		return job.Record{Kind: job.KindFailed, Reason: job.ReasonInternal}
	}
	// Exit status and signal are separate facts: ExitCode is -1 exactly when a signal ended it.
	if code := state.ExitCode(); code != -1 {
		return job.Record{Kind: job.KindExited, Status: code}
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return job.Record{Kind: job.KindSignaled, Signal: int(ws.Signal())}
	}
	return job.Record{Kind: job.KindFailed, Reason: job.ReasonInternal}
}

// send writes one record.
func (r *runner) send(rec job.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sendLocked(rec)
}

// sendLocked writes one record with r.mu held. A record that cannot be written means the broker
// is gone, which stops the script as EOF does.
func (r *runner) sendLocked(rec job.Record) error {
	buf, err := job.AppendRecord(r.scratch[:0], rec)
	if err == nil {
		r.scratch = buf
		_, err = r.conn.Write(buf)
	}
	if err != nil {
		r.broken.Store(true)
		r.unsent.Store(true)
		r.cancel()
	}
	return err
}

// overflowed records that stream passed its limit and stops the group. It signals the group
// itself, not only through cmd.Cancel, because os/exec no longer cancels once it has seen the sh
// exit, while a background descendant may still be writing.
func (r *runner) overflowed(stream string) {
	r.overflowMu.Lock()
	if r.overflow == "" {
		r.overflow = stream
	}
	r.overflowMu.Unlock()
	r.group.stop()
	r.cancel()
}

// limitWriter streams one of the script's outputs to the broker as records of at most job.MaxChunk
// bytes, up to its limit (every byte when the limit is job.Unlimited). The first byte over the
// limit is an overflow: the bytes up to the limit are sent, that byte and every later one are
// dropped, and the group is stopped.
type limitWriter struct {
	r      *runner
	kind   job.Kind
	stream string
	limit  int
	n      int  // bytes sent
	over   bool // the limit was passed
}

// readBufs holds the buffers the script's output is read into, shared by jobs, so a resident
// helper does not leave a trail of garbage behind each run.
var readBufs = sync.Pool{New: func() any { b := make([]byte, job.MaxChunk); return &b }}

// ReadFrom reads the script's output pipe to its end into a pooled buffer (os/exec's copy would
// allocate one per stream per job).
func (w *limitWriter) ReadFrom(src io.Reader) (int64, error) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	var total int64
	for {
		n, err := src.Read(*bp)
		if n > 0 {
			w.Write((*bp)[:n])
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Write never fails: dropped output is still read, so the pipe stays drained and the script stops
// by the group's signals, not by SIGPIPE.
func (w *limitWriter) Write(p []byte) (int, error) {
	<-w.r.ready
	if w.over {
		return len(p), nil
	}
	keep := p
	if room := w.limit - w.n; w.limit != job.Unlimited && len(p) > room {
		keep, w.over = p[:room], true
	}
	for rest := keep; len(rest) > 0; {
		chunk := rest[:min(len(rest), job.MaxChunk)]
		rest = rest[len(chunk):]
		if err := w.r.send(job.Record{Kind: w.kind, Data: chunk}); err != nil {
			break // the broker is gone; sendLocked has stopped the script
		}
	}
	w.n += len(keep)
	if w.over {
		w.r.overflowed(w.stream)
	}
	return len(p), nil
}

// groupStop stops the script's process group once: SIGTERM now, SIGKILL when killGrace has
// passed unless the group is gone by then.
type groupStop struct {
	pgid  int
	once  sync.Once
	began atomic.Bool
	done  chan struct{} // closed when the escalation has ended
}

func (g *groupStop) stop() {
	g.once.Do(func() {
		g.began.Store(true)
		_ = unix.Kill(-g.pgid, unix.SIGTERM)
		go g.escalate()
	})
}

// escalate sends SIGKILL to the group when killGrace has passed, unless the group is gone. The
// group keeps its id reserved while any member, even an unreaped zombie, is left, and the sh is
// a member until it is reaped; after that a pid reuse within killGrace would be needed for the
// SIGKILL to reach an unrelated group.
func (g *groupStop) escalate() {
	defer close(g.done)
	grace := time.NewTimer(killGrace)
	defer grace.Stop()
	poll := time.NewTicker(groupPoll)
	defer poll.Stop()
	for {
		select {
		case <-poll.C:
			if unix.Kill(-g.pgid, 0) == unix.ESRCH {
				return
			}
		case <-grace.C:
			_ = unix.Kill(-g.pgid, unix.SIGKILL)
			return
		}
	}
}

// wait returns once a stop that began has finished escalating. Only call it after cmd.Wait has
// returned: by then every caller of stop has returned.
func (g *groupStop) wait() {
	if g.began.Load() {
		<-g.done
	}
}
