package broker

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/helper/job"
	"github.com/libtmux/libtmux-mcp/internal/spool"
)

// Defaults and bounds of background runs (tmux_run_start).
const (
	DefaultBackgroundTimeout = time.Hour // ceiling of one background run
	DefaultMaxBackground     = 8         // background runs in flight per server
	// DefaultBackgroundOutput is how many bytes of each stream a background run keeps: the first
	// half and the newest half; the middle is dropped and counted.
	DefaultBackgroundOutput = int(spool.DefaultBound)
	// KeepFinished is how long a finished background run stays readable, and KeepFinishedRuns
	// how many finished ones at most; then its files are removed.
	KeepFinished     = 30 * time.Minute
	KeepFinishedRuns = 64
	// HandlePrefix begins every background run's handle.
	HandlePrefix = "trs-"
)

// bgStartWait bounds the wait for the helper's started record once the job is sent.
const bgStartWait = 10 * time.Second

// Background is a run that goes on after the call that started it: its own helper, started by
// the enrolled shell for it alone, runs the script while the shell stays at its prompt. Each
// stream is kept in a private file of the broker's directory, bounded (head and tail, the
// middle counted); the end is kept until the run is forgotten.
type Background struct {
	Handle  string
	Pane    string
	Command string // the script's first line, as RunRecord keeps it
	Started time.Time
	Receipt Receipt

	stdout, stderr *spool.File
	h              *resident
	stopReq        chan Code     // a stop the follower takes once
	begun          chan struct{} // closed once the helper confirmed the start, or the run ended
	done           chan struct{} // closed once the run ended

	mu         sync.Mutex
	pgid       int
	code       Code // why it ended without a plain completion; empty otherwise
	message    string
	completion *Completion
	survivors  *Survivors
	ended      time.Time
	forget     *time.Timer
}

// BackgroundView is a background run as one call sees it: its state and its output from an
// offset of each stream.
type BackgroundView struct {
	Handle, Pane, Command string
	Digest                string // the script's, as the receipt names it
	Started               time.Time
	Running               bool
	Code                  Code // set when it ended without a plain completion (cancelled, timed_out, helper_failed)
	Message               string
	Completion            *Completion // nil unless the end was observed
	Survivors             *Survivors  // what it left running in its group; nil unless checked
	Stdout, Stderr        spool.Part
}

// Start authorizes req like Run and starts its script in the background: the answer comes as
// soon as the helper confirmed the start, with the run's handle. A refusal is an Outcome as Run
// answers it, and an empty handle. The run then goes on until it ends, is cancelled
// (CancelBackground), passes the background time limit, or the broker closes.
func (b *Broker) Start(ctx context.Context, req Request) (Outcome, string) {
	if !b.enter() {
		return refused(CodeBrokerUnavailable, "the tmux_run broker is shutting down").outcome(), ""
	}
	defer b.runWG.Done()
	e, sh, bad := b.admit(ctx, req)
	if bad != nil {
		return *bad, ""
	}
	// The broker keeps a bounded head and tail of each stream: the helper sends every byte.
	req.StdoutLimit, req.StderrLimit = job.Unlimited, job.Unlimited
	if !b.takeSlot() {
		return refused(CodeTooManyRuns, fmt.Sprintf("this server already has %d background runs in flight (LIBTMUX_MCP_MAX_BACKGROUND_RUNS); wait for one with wait_for_run or stop one with cancel_run (list_runs shows them)", b.cfg.MaxBackground)).outcome(), ""
	}
	if !b.reserve(req.Pane) {
		b.freeSlot()
		return refused(CodeRunInProgress, fmt.Sprintf("pane %s has a tmux_run in flight, and a run starts only while its shell answers; retry when it ends", req.Pane)).outcome(), ""
	}
	defer b.release(req.Pane)
	out := Outcome{Delivery: NotSent, Receipt: newReceipt(req, e)}
	bg, r := b.launch(ctx, sh, req, out.Receipt)
	if r != nil {
		b.freeSlot()
		out.Code, out.Message, out.Recovery = r.code, r.msg, r.recovery
		if r.code == CodeHelperFailed || r.code == CodeCancelled {
			out.Delivery = PossiblySent
		}
		b.remember(req.Pane, time.Now(), req.Script, out)
		return out, ""
	}
	startWait := time.NewTimer(bgStartWait)
	defer startWait.Stop()
	select {
	case <-bg.begun:
	case <-startWait.C:
		bg.requestStop(CodeHelperFailed)
		<-bg.done
	case <-ctx.Done():
		bg.requestStop(CodeCancelled)
		<-bg.done
	}
	v := bg.view()
	out.Delivery = PossiblySent
	if bg.observedStart() {
		out.Delivery = Observed
	}
	if !v.Running && v.Completion == nil {
		// It never ran, or was stopped before this call answered: no handle to follow.
		out.Code, out.Message = v.Code, v.Message
		b.forgetRun(bg.Handle)
		return out, ""
	}
	return out, bg.Handle
}

// launch asks the shell for a helper of this run's own and sends it the job; the follower
// goroutine then owns the run. A refusal means nothing was sent.
func (b *Broker) launch(ctx context.Context, sh *shell, req Request, rc *Receipt) (*Background, *refusal) {
	p, r := b.prompt(ctx, sh)
	if r != nil {
		return nil, r
	}
	rep, spawned, r := b.ask(ctx, sh, p, rc.RunID, true)
	if r != nil {
		return nil, r
	}
	cancelHelper := func() {
		job.WriteCancel(spawned.conn)
		spawned.conn.Close()
	}
	attrs, err := peercred.ReadAttrs(sh.e.PID)
	if err != nil {
		cancelHelper()
		return nil, shellGone(fmt.Sprintf("cannot read the enrolled shell's state: %v", err))
	}
	handle := HandlePrefix + rc.RunID[:12]
	bg := &Background{
		Handle: handle, Pane: req.Pane, Command: firstLine(req.Script), Started: time.Now(), Receipt: *rc,
		stopReq: make(chan Code, 1), begun: make(chan struct{}), done: make(chan struct{}),
	}
	base := filepath.Join(b.l.dir, handle)
	if bg.stdout, err = spool.Create(base+".out", int64(b.cfg.BackgroundOutput)); err == nil {
		if bg.stderr, err = spool.Create(base+".err", int64(b.cfg.BackgroundOutput)); err != nil {
			bg.stdout.Remove()
		}
	}
	if err != nil {
		cancelHelper()
		return nil, refused(CodeSpawnFailed, fmt.Sprintf("cannot make the run's output files: %v", err))
	}
	bg.h = newResident(spawned, attrs, func(err error) {
		b.cfg.Log.Info("tmux_run_start helper ended", slog.String("handle", handle), slog.Any("err", err))
	})
	b.stamp(req.Pane, sh.e.PID, rc.RunID)
	if err := job.WriteJob(bg.h.conn, newJob(sh, rep, attrs, req, rc)); err != nil {
		bg.h.close()
		bg.stdout.Remove()
		bg.stderr.Remove()
		return nil, refused(CodeSpawnFailed, fmt.Sprintf("cannot send the job to the helper: %v", err))
	}
	b.mu.Lock()
	b.background[handle] = bg
	b.mu.Unlock()
	b.bgWG.Add(1)
	go b.follow(bg, req.Script)
	return bg, nil
}

// follow reads the run's records to its end: output into its files, the final record into its
// end. It stops the run on request, at the background time limit, or when the helper goes.
func (b *Broker) follow(bg *Background, script []byte) {
	defer b.bgWG.Done()
	h := bg.h
	defer h.close()
	limit := time.NewTimer(b.cfg.BackgroundTimeout)
	defer limit.Stop()
	var st helperStop
	begin := sync.OnceFunc(func() { close(bg.begun) })
	defer begin()
	var writeErr error
	for {
		select {
		case rec := <-h.records:
			var err error
			switch rec.Kind {
			case job.KindStarted:
				bg.mu.Lock()
				bg.pgid = rec.PGID
				bg.mu.Unlock()
				begin()
			case job.KindStdout:
				_, err = bg.stdout.Write(rec.Data)
			case job.KindStderr:
				_, err = bg.stderr.Write(rec.Data)
			}
			if err != nil && writeErr == nil {
				writeErr = err
				b.cfg.Log.Warn("tmux_run_start output file", slog.String("handle", bg.Handle), slog.Any("err", err))
			}
			if rec.Final() {
				out := b.finish(Outcome{}, rec, st.code, Request{})
				if st.code != "" && out.Code == st.code {
					out.Message = bgStopMessage(st.code, b.cfg.BackgroundTimeout)
				}
				if out.Completion != nil {
					left := survivorsOf(bg.group())
					bg.mu.Lock()
					bg.survivors = left
					bg.mu.Unlock()
				}
				b.end(bg, out.Code, out.Message, out.Completion, script)
				return
			}
		case <-h.dead:
			msg := fmt.Sprintf("the helper went away before reporting how the script ended (%v)", h.err)
			code := CodeHelperFailed
			if st.code != "" {
				code, msg = st.code, bgStopMessage(st.code, b.cfg.BackgroundTimeout)
			}
			if pgid := bg.group(); pgid > 0 {
				msg += "; " + stopGroup(pgid)
			}
			b.end(bg, code, msg, nil, script)
			return
		case <-limit.C:
			st.ask(h, CodeTimedOut)
		case code := <-bg.stopReq:
			st.ask(h, code)
		case <-st.grace:
			msg := bgStopMessage(st.code, b.cfg.BackgroundTimeout) + "; the helper did not confirm the stop"
			if pgid := bg.group(); pgid > 0 {
				msg += "; " + stopGroup(pgid)
			}
			b.end(bg, st.code, msg, nil, script)
			return
		}
	}
}

func bgStopMessage(code Code, limit time.Duration) string {
	switch code {
	case CodeTimedOut:
		return fmt.Sprintf("the script ran past the background time limit (%s, LIBTMUX_MCP_BACKGROUND_TIMEOUT) and its process group was stopped; descendants that left the group may still run", limit)
	case CodeCancelled:
		return "cancel_run stopped the script's process group; descendants that left the group may still run"
	case CodeBrokerUnavailable:
		return "the server exited and stopped the script's process group; descendants that left the group may still run"
	case CodeHelperFailed:
		return fmt.Sprintf("the helper did not confirm the start within %s, so the script's process group was stopped", bgStartWait)
	}
	return "the helper stopped the script before it completed"
}

// end records how bg ended, frees its slot, and schedules it to be forgotten.
func (b *Broker) end(bg *Background, code Code, msg string, c *Completion, script []byte) {
	bg.mu.Lock()
	bg.code, bg.message, bg.completion, bg.ended = code, msg, c, time.Now()
	bg.mu.Unlock()
	b.remember(bg.Pane, bg.Started, script, Outcome{Code: code, Completion: c, Receipt: &bg.Receipt})
	b.freeSlot()
	b.mu.Lock()
	if !b.closed {
		bg.forget = time.AfterFunc(b.keepFinished, func() { b.forgetRun(bg.Handle) })
	}
	var finished []*Background
	for _, o := range b.background {
		if o != bg && o.hasEnded() {
			finished = append(finished, o)
		}
	}
	b.mu.Unlock()
	close(bg.done)
	// Keep the last KeepFinishedRuns finished runs, this one among them.
	if extra := len(finished) + 1 - KeepFinishedRuns; extra > 0 {
		slices.SortFunc(finished, func(x, y *Background) int { return x.endedAt().Compare(y.endedAt()) })
		for _, o := range finished[:extra] {
			b.forgetRun(o.Handle)
		}
	}
}

// forgetRun drops a finished run and removes its files.
func (b *Broker) forgetRun(handle string) {
	b.mu.Lock()
	bg := b.background[handle]
	if bg == nil || !bg.hasEnded() {
		b.mu.Unlock()
		return
	}
	delete(b.background, handle)
	b.mu.Unlock()
	if bg.forget != nil {
		bg.forget.Stop()
	}
	bg.stdout.Remove()
	bg.stderr.Remove()
	if b.onForget != nil {
		b.onForget(handle)
	}
}

// takeSlot reserves one of the MaxBackground places of runs in flight.
func (b *Broker) takeSlot() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bgRunning >= b.cfg.MaxBackground {
		return false
	}
	b.bgRunning++
	return true
}

func (b *Broker) freeSlot() {
	b.mu.Lock()
	b.bgRunning--
	b.mu.Unlock()
}

// background returns the run of handle, or an error that names how to find runs.
func (b *Broker) backgroundRun(handle string) (*Background, error) {
	b.mu.Lock()
	bg := b.background[handle]
	b.mu.Unlock()
	if bg == nil {
		return nil, fmt.Errorf("no background run has handle %q; list_runs shows this server's runs (a finished run is kept %s, the last %d)", handle, KeepFinished, KeepFinishedRuns)
	}
	return bg, nil
}

// WaitBackground waits until the run of handle ends or ctx ends, and answers its view with
// each stream from its offset (from[0] stdout, from[1] stderr) within budget bytes per stream.
func (b *Broker) WaitBackground(ctx context.Context, handle string, from [2]int64, budget int) (BackgroundView, error) {
	bg, err := b.backgroundRun(handle)
	if err != nil {
		return BackgroundView{}, err
	}
	select {
	case <-bg.done:
	case <-ctx.Done():
	}
	return bg.read(from, budget)
}

// CancelBackground stops the run of handle (its process group: SIGTERM, then SIGKILL after a
// grace) and answers its view once it ended, as WaitBackground does. A run that already ended
// is answered as it is.
func (b *Broker) CancelBackground(ctx context.Context, handle string, from [2]int64, budget int) (BackgroundView, error) {
	bg, err := b.backgroundRun(handle)
	if err != nil {
		return BackgroundView{}, err
	}
	bg.requestStop(CodeCancelled)
	select {
	case <-bg.done:
	case <-ctx.Done():
	}
	return bg.read(from, budget)
}

// Backgrounds lists the background runs the broker knows, in flight and finished, oldest first,
// without their output.
func (b *Broker) Backgrounds() []BackgroundView {
	b.mu.Lock()
	runs := make([]*Background, 0, len(b.background))
	for _, bg := range b.background {
		runs = append(runs, bg)
	}
	b.mu.Unlock()
	slices.SortFunc(runs, func(x, y *Background) int { return x.Started.Compare(y.Started) })
	views := make([]BackgroundView, len(runs))
	for i, bg := range runs {
		views[i] = bg.view()
	}
	return views
}

// stopBackground stops every run in flight and waits for their ends; Close calls it before the
// broker's directory, and so every output file, is removed.
func (b *Broker) stopBackground() {
	b.mu.Lock()
	runs := make([]*Background, 0, len(b.background))
	for _, bg := range b.background {
		runs = append(runs, bg)
	}
	b.mu.Unlock()
	for _, bg := range runs {
		bg.requestStop(CodeBrokerUnavailable)
	}
	b.bgWG.Wait()
	for _, bg := range runs {
		b.forgetRun(bg.Handle)
	}
}

func (bg *Background) requestStop(code Code) {
	select {
	case bg.stopReq <- code:
	default: // a stop is already asked for
	}
}

func (bg *Background) hasEnded() bool {
	select {
	case <-bg.done:
		return true
	default:
		return false
	}
}

func (bg *Background) endedAt() time.Time {
	bg.mu.Lock()
	defer bg.mu.Unlock()
	return bg.ended
}

func (bg *Background) group() int {
	bg.mu.Lock()
	defer bg.mu.Unlock()
	return bg.pgid
}

func (bg *Background) observedStart() bool { return bg.group() > 0 }

// view is bg's state without output.
func (bg *Background) view() BackgroundView {
	running := !bg.hasEnded()
	bg.mu.Lock()
	defer bg.mu.Unlock()
	return BackgroundView{
		Handle: bg.Handle, Pane: bg.Pane, Command: bg.Command, Digest: bg.Receipt.ScriptDigest, Started: bg.Started,
		Running: running, Code: bg.code, Message: bg.message, Completion: bg.completion, Survivors: bg.survivors,
	}
}

// read is bg's view with each stream from its offset.
func (bg *Background) read(from [2]int64, budget int) (BackgroundView, error) {
	v := bg.view()
	var err error
	if v.Stdout, err = bg.stdout.Read(from[0], budget); err != nil {
		return BackgroundView{}, fmt.Errorf("stdout: %w", err)
	}
	if v.Stderr, err = bg.stderr.Read(from[1], budget); err != nil {
		return BackgroundView{}, fmt.Errorf("stderr: %w", err)
	}
	return v, nil
}
