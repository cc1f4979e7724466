package live

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// TestWatchOrTickWithoutPool: without a pool the wait is woken by a timer,
// and says so (Stream false, no Command).
func TestWatchOrTickWithoutPool(t *testing.T) {
	t.Parallel()
	w := WatchOrTick(context.Background(), nil, slog.New(slog.DiscardHandler), "$1", "%1", true)
	defer w.Stop()
	if w.Stream || w.Command != nil {
		t.Errorf("Stream = %v, Command set = %v; want a timer without a connection", w.Stream, w.Command != nil)
	}
	select {
	case <-w.C:
	case <-time.After(10 * FallbackEvery):
		t.Fatalf("no wake-up in %v; want one every %v", 10*FallbackEvery, FallbackEvery)
	}
}
