package broker

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/libtmux/libtmux-mcp/helper/job"
)

// stopGrace is how long a stopped helper has to send its last record.
const stopGrace = 3 * time.Second

// groupGrace is how long a script's process group has between SIGTERM and SIGKILL when the
// broker stops it itself, as the helper would have.
const groupGrace = 500 * time.Millisecond

// stopGroup stops the process group of a script whose helper is gone (the started record named
// it): SIGTERM, then SIGKILL if a member is left after groupGrace. It says what it did. (A
// group's id is its leader's pid, which the kernel reuses only once every member has exited.)
func stopGroup(pgid int) string {
	if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
		return fmt.Sprintf("the script's process group %d had already ended", pgid)
	}
	deadline := time.Now().Add(groupGrace)
	for time.Now().Before(deadline) {
		if signalGroup(pgid, 0) != nil {
			return fmt.Sprintf("the broker stopped the script's process group %d with SIGTERM", pgid)
		}
		time.Sleep(10 * time.Millisecond) // no descriptor tells when a group empties
	}
	signalGroup(pgid, syscall.SIGKILL)
	return fmt.Sprintf("the broker stopped the script's process group %d (SIGTERM, then SIGKILL after %s)", pgid, groupGrace)
}

// helperStop is a stop asked of a helper, once: the first reason, and the grace the helper has
// to confirm it (nil until asked).
type helperStop struct {
	code  Code
	grace <-chan time.Time
}

// ask sends STOP to h the first time, for code; later asks change nothing.
func (s *helperStop) ask(h *resident, code Code) {
	if s.code == "" {
		s.code = code
		job.WriteStop(h.conn)
		s.grace = time.After(stopGrace)
	}
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
	var st helperStop
	pgid := 0 // the script's process group, from the started record
	for {
		select {
		case rec := <-h.records:
			switch rec.Kind {
			case job.KindStarted:
				out.Delivery = Observed
				pgid = rec.PGID
			case job.KindStdout:
				out.Stdout = append(out.Stdout, rec.Data...)
			case job.KindStderr:
				out.Stderr = append(out.Stderr, rec.Data...)
			}
			if len(out.Stdout) > req.StdoutLimit || len(out.Stderr) > req.StderrLimit {
				// The helper enforces the limits; a helper that does not is
				// stopped and not believed.
				st.ask(h, CodeOutputOverflow)
			}
			if rec.Final() {
				keep = st.code != CodeOutputOverflow || rec.Kind == job.KindOverflow
				out = b.finish(out, rec, st.code, req)
				if out.Completion != nil {
					out.Survivors = survivorsOf(pgid)
				}
				return out
			}
		case <-h.dead:
			out.Code = CodeHelperFailed
			out.Message = fmt.Sprintf("the helper went away before reporting how the script ended (%v); it may have run", h.err)
			if st.code == CodeCancelled || st.code == CodeTimedOut {
				out.Code, out.Message = st.code, stopMessage(st.code, b.cfg.RunTimeout)
			}
			if pgid > 0 {
				// The script outlives its helper (its own group, reparented): stop it here.
				out.Message += "; " + stopGroup(pgid) + "; descendants that left the group may still run"
			}
			out.Stdout, out.Stderr = nil, nil
			return out
		case <-tick.C:
			if req.Progress != nil && st.code == "" {
				req.Progress(Progress{ElapsedMS: time.Since(began).Milliseconds(), StdoutBytes: len(out.Stdout), StderrBytes: len(out.Stderr)})
			}
		case <-timeout.C:
			st.ask(h, CodeTimedOut)
		case <-ctx.Done():
			st.ask(h, CodeCancelled)
			ctx = context.Background() // fire once
		case <-st.grace:
			out.Code, out.Message = st.code, stopMessage(st.code, b.cfg.RunTimeout)+"; the helper did not confirm the stop"
			if pgid > 0 {
				out.Message += "; " + stopGroup(pgid)
			}
			out.Stdout, out.Stderr = nil, nil
			return out
		}
	}
}

// finish turns the helper's final record into the outcome.
func (b *Broker) finish(out Outcome, rec job.Record, stopCode Code, req Request) Outcome {
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
		out.Message = fmt.Sprintf("the script wrote more than %d bytes to %s, so it was stopped; raise %s_limit (at most %d), write less, or start it with tmux_run_start, which keeps the head and tail of any output", limit, rec.Stream, rec.Stream, MaxOutputLimit)
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

func stopMessage(code Code, timeout time.Duration) string {
	switch code {
	case CodeTimedOut:
		return fmt.Sprintf("the script ran past the run timeout (%s) and its process group was stopped; descendants that left the group may still run", timeout)
	case CodeCancelled:
		return "the call was cancelled and the script's process group was stopped; descendants that left the group may still run"
	}
	return "the helper stopped the script before it completed"
}
