package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressEvery is how often a wait tells a client that asked for progress
// that it is still waiting.
const progressEvery = 2 * time.Second

// wait is one blocking call's time budget: its effective timeout (the
// request's, clamped to the ceiling; the ceiling when omitted), its
// deadline, and progress notifications when the client asked for them.
type wait struct {
	effective time.Duration
	deadline  time.Time
	stop      func()
}

// startWait begins a wait of timeoutMs (nil = the ceiling) for req. The
// returned context ends at the deadline; wait.end must be called.
func (s *server) startWait(ctx context.Context, req *mcp.CallToolRequest, timeoutMs *int64, what string) (context.Context, *wait) {
	eff := s.effectiveTimeout(timeoutMs)
	w := &wait{effective: eff, deadline: time.Now().Add(eff), stop: func() {}}
	wctx, cancel := context.WithDeadline(ctx, w.deadline)
	stopProgress := s.progress(ctx, req, eff, what)
	w.stop = func() { stopProgress(); cancel() }
	return wctx, w
}

// end releases the wait's timer and progress notifications.
func (w *wait) end() { w.stop() }

// ms is the effective timeout in milliseconds, as results report it.
func (w *wait) ms() int64 { return w.effective.Milliseconds() }

// effectiveTimeout clamps a requested timeout to the wait ceiling; an
// omitted (or non-positive) request is the ceiling.
func (s *server) effectiveTimeout(timeoutMs *int64) time.Duration {
	ceiling := s.deps.Limits.WaitMax
	if timeoutMs == nil || *timeoutMs <= 0 {
		return ceiling
	}
	if *timeoutMs >= ceiling.Milliseconds() {
		return ceiling
	}
	return time.Duration(*timeoutMs) * time.Millisecond
}

// progress sends a progress notification every progressEvery until the
// returned function is called, when the client gave a progress token.
func (s *server) progress(ctx context.Context, req *mcp.CallToolRequest, total time.Duration, what string) func() {
	if req == nil || req.Session == nil || req.Params == nil {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		begin := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				elapsed := time.Since(begin)
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      float64(elapsed.Milliseconds()),
					Total:         float64(total.Milliseconds()),
					Message:       fmt.Sprintf("%s: waited %d of %d ms", what, elapsed.Milliseconds(), total.Milliseconds()),
				})
			}
		}
	}()
	return func() { close(done); <-finished }
}

// ended says why a wait context ended: "" while it has not, timed_out at
// its deadline, cancelled when the request or the server ended it.
func (s *server) ended(wctx, ctx context.Context) string {
	if wctx.Err() == nil {
		return ""
	}
	if ctx.Err() != nil {
		return outcomeCancelled
	}
	return outcomeTimedOut
}
