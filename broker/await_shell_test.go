package broker

import (
	"context"
	"testing"

	"github.com/libtmux/libtmux-mcp/enroll"
)

// awaitShell waits for hello to put an enrollment's shell in shells (the registry accepts the
// enrollment a moment before), and gives up when ctx ends; a shell of another enrollment is not
// the one it waits for.
func TestAwaitShell(t *testing.T) {
	e := &enroll.Enrollment{ID: "e1", Pane: "%1"}
	b := &Broker{shells: map[string]*shell{}, shellSet: make(chan struct{})}
	other := &shell{e: &enroll.Enrollment{ID: "e0", Pane: "%1"}}
	b.shells["%1"] = other
	sh := &shell{e: e}
	got := make(chan *shell, 1)
	go func() { got <- b.awaitShell(context.Background(), "%1", e) }()
	b.mu.Lock()
	b.shells["%1"] = sh
	close(b.shellSet)
	b.shellSet = make(chan struct{})
	b.mu.Unlock()
	if s := <-got; s != sh {
		t.Errorf("awaitShell returned %+v; want the shell hello put in shells", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s := b.awaitShell(ctx, "%2", &enroll.Enrollment{ID: "e2", Pane: "%2"}); s != nil {
		t.Errorf("awaitShell of a pane no shell joins, its ctx ended: %+v; want nil", s)
	}
}
