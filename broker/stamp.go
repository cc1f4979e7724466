package broker

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// RunOption is the pane option stamped with the last run a shell agreed to.
const RunOption = "@libtmux_mcp_run"

// Stamp records runID on pane, in one tmux command-queue step and only if the pane still runs
// process pid and is alive (tmux.GuardCommand), so a stamp never lands on a respawned pane. The
// broker calls it only once the shell has agreed to the run, off the run's path: it is a record
// for people (tmux show-options -p @libtmux_mcp_run), not the authorization. It reports whether
// the stamp was written.
func Stamp(ctx context.Context, c *tmux.Client, pane string, pid int, runID string) (bool, error) {
	nonce := enroll.NewRunID()
	args, err := tmux.GuardCommand(pane, pid, RunOption, runID, nonce)
	if err != nil {
		return false, err
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return false, err
	}
	return strings.Contains(out, "OK-"+nonce+"\n"), nil
}

// stampDelay is how long a run's stamp waits before it is written. Stamps that come meanwhile
// are written together, the latest per pane: a busy agent costs at most one tmux process per
// delay, never one per run.
const stampDelay = 100 * time.Millisecond

// stamper writes the @libtmux_mcp_run pane option off the run's path, after the shell agreed.
type stamper struct {
	mu      sync.Mutex
	pending map[string]pendingStamp // by pane
	wake    chan struct{}
	quit    chan struct{}
	once    sync.Once
}

type pendingStamp struct {
	pid   int
	runID string
}

func (s *stamper) init() {
	s.pending = map[string]pendingStamp{}
	s.wake = make(chan struct{}, 1)
	s.quit = make(chan struct{})
}

// stamp queues the stamp of a run the shell of pane (process pid) agreed to.
func (b *Broker) stamp(pane string, pid int, runID string) {
	b.stamps.mu.Lock()
	b.stamps.pending[pane] = pendingStamp{pid: pid, runID: runID}
	b.stamps.mu.Unlock()
	select {
	case b.stamps.wake <- struct{}{}:
	default:
	}
}

// stopStamps ends stampLoop; stamps not yet written are dropped.
func (b *Broker) stopStamps() { b.stamps.once.Do(func() { close(b.stamps.quit) }) }

// stampLoop writes queued stamps until ctx ends or the broker closes.
func (b *Broker) stampLoop(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.stamps.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	delay := time.NewTimer(stampDelay)
	delay.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.stamps.wake:
		}
		delay.Reset(stampDelay)
		select {
		case <-ctx.Done():
			return
		case <-delay.C:
		}
		b.stamps.mu.Lock()
		batch := b.stamps.pending
		b.stamps.pending = map[string]pendingStamp{}
		b.stamps.mu.Unlock()
		for pane, st := range batch {
			if _, err := Stamp(ctx, b.cfg.Client, pane, st.pid, st.runID); err != nil && ctx.Err() == nil {
				b.cfg.Log.Warn("tmux_run could not stamp the pane with its run", slog.String("pane", pane), slog.Any("err", err))
			}
		}
	}
}
