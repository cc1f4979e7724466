//go:build linux

package pollwait

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Ready returns when the descriptor becomes readable, when ctx is cancelled (at once, not at a
// poll slice), and refuses a closed descriptor.
func TestReady(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	done := make(chan error, 1)
	go func() { done <- Ready(context.Background(), p[0]) }()
	unix.Close(p[1]) // the read end hangs up
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Ready after the write end closed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ready did not return after the write end closed")
	}

	var q [2]int
	if err := unix.Pipe2(q[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(q[0])
	defer unix.Close(q[1])
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- Ready(ctx, q[0]) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Ready after cancel: %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ready did not return after cancel")
	}

	if err := Ready(context.Background(), 987654); !errors.Is(err, unix.EBADF) {
		t.Errorf("Ready on a closed descriptor: %v; want EBADF", err)
	}
}
