package tmux_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// TestDeadlineHolds stops the tmux server (SIGSTOP: its client then
// ignores SIGTERM) and runs a command with a 500 ms deadline: it returns
// soon after the deadline (the kill grace is 50 ms; it was 2 s), with an
// error saying tmux did not answer.
func TestDeadlineHolds(t *testing.T) {
	ts := tmuxtest.Start(t)
	pid, err := strconv.Atoi(strings.TrimSpace(ts.Run("display", "-p", "#{pid}")))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	c, err := tmux.NewClient(ts.Client.Route(), 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Run(context.Background(), "list-sessions")
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer within 500ms") {
		t.Errorf("got %v; want the deadline's error", err)
	}
	// Generous for a loaded machine; the old 2 s grace could not pass it.
	if took > 1500*time.Millisecond {
		t.Errorf("a 500 ms deadline returned after %s; want well under 2 s", took)
	}
	t.Logf("a 500 ms deadline returned after %s", took)
}

// TestDescriptorExhaustion: a tmux call that cannot start for want of file
// descriptors says so, with the limit and the next step.
func TestDescriptorExhaustion(t *testing.T) {
	ts := tmuxtest.Start(t)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Hold descriptors until the next pipe cannot be made.
	var held []int
	defer func() {
		for _, fd := range held {
			syscall.Close(fd)
		}
	}()
	for range lim.Cur {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		held = append(held, fd)
	}
	_, err := ts.Client.Run(context.Background(), "list-sessions")
	for _, fd := range held {
		syscall.Close(fd)
	}
	held = nil
	if err == nil || !strings.Contains(err.Error(), "open files") || !strings.Contains(err.Error(), "ulimit -n") {
		t.Errorf("got %v; want an error naming the open-file limit and ulimit -n", err)
	}
	// What holds them: here the held /dev/null descriptors, counted among the files.
	if err != nil && (!strings.Contains(err.Error(), "pipes") || !strings.Contains(err.Error(), "files and others")) {
		t.Errorf("got %v; want it to say what holds the descriptors", err)
	}
}
