package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/libtmux/libtmux-mcp/helper/job"
)

// stopGrace is how long a stopped helper has to send its last record.
const stopGrace = 3 * time.Second

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
