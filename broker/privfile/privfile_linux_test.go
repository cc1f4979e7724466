//go:build linux

package privfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// The liveness FIFO: no hangup before a writer came, none while it holds it, a hangup once it
// closed it (close-on-exec copies close at exec, as the shell's does at `exec zsh`).
func TestFIFOHangup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live")
	fd, err := OpenFIFO(path)
	if err != nil {
		t.Fatal(err)
	}
	defer CloseFD(fd)
	if Hungup(fd) {
		t.Error("hung up before any writer opened it")
	}
	w, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if Hungup(fd) {
		t.Error("hung up while a writer holds it")
	}
	done := make(chan error, 1)
	go func() { done <- WaitHangup(context.Background(), fd) }()
	w.Close()
	hangupSeen(t, done)
	if !Hungup(fd) {
		t.Error("no hangup after the last writer closed it")
	}
}

// Bytes written to the FIFO are no hangup: the wait reads and drops them and goes on waiting
// until the writer closes it.
func TestWaitHangupIgnoresBytes(t *testing.T) {
	fd, w := fifoWithWriter(t)
	done := make(chan error, 1)
	go func() { done <- WaitHangup(context.Background(), fd) }()
	if _, err := w.Write([]byte("not a hangup\n")); err != nil {
		t.Fatal(err)
	}
	// The wait has seen the bytes once the FIFO is empty again.
	tmuxtest.Eventually(t, 10*time.Second, "the wait reading the bytes", func() bool {
		n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
		return err == nil && n == 0
	})
	select {
	case err := <-done:
		t.Fatalf("WaitHangup returned %v while the writer still holds the FIFO", err)
	default:
	}
	w.Close()
	hangupSeen(t, done)
}

// hangupSeen fails t unless the WaitHangup answering on done returns nil within 10 s (its
// FIFO's last writer has just closed it).
func hangupSeen(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WaitHangup on the FIFO = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitHangup did not return when the last writer closed")
	}
}

// A cancel wakes a wait on a FIFO whose writer never closes.
func TestWaitHangupCancel(t *testing.T) {
	fd, w := fifoWithWriter(t)
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- WaitHangup(ctx, fd) }()
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("WaitHangup after cancel = %v; want %v", err, context.Canceled)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitHangup did not return after cancel")
	}
}

// The lock file: one open file holds the lock, another cannot take it until the first closes.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, err := OpenNoFollow(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("TryLock(first) = %v, %v; want true, nil", ok, err)
	}
	b, err := OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("TryLock(second) while the first holds it = %v, %v; want false, nil", ok, err)
	}
	a.Close()
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("TryLock(second) after the first closed = %v, %v; want true, nil", ok, err)
	}
}

// OpenNoFollow refuses a symlink as the last element; OwnedByUs knows our own file.
func TestOpenNoFollowAndOwner(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenNoFollow(link, os.O_RDONLY, 0); err == nil {
		f.Close()
		t.Error("OpenNoFollow followed a symlink")
	}
	f, err := OpenNoFollow(target, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if !OwnedByUs(fi) {
		t.Error("OwnedByUs(a file this process made) = false")
	}
}

// TrustedAncestors: a directory under / alone (root's, 0755) is trusted, and one under the
// sticky temporary directory; one under a directory others may write without the sticky bit
// is not, nor a relative path.
func TestTrustedAncestors(t *testing.T) {
	if !TrustedAncestors("/libtmux-mcp-not-made") {
		t.Error("a directory right under / is not trusted")
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if !TrustedAncestors(filepath.Join(filepath.Dir(open), "run")) {
		t.Errorf("a directory of ours under the sticky %s is not trusted", os.TempDir())
	}
	for _, dir := range []string{filepath.Join(open, "run"), "relative/run"} {
		if TrustedAncestors(dir) {
			t.Errorf("%s is trusted; another user could rename a directory above it", dir)
		}
	}
}

// fifoWithWriter makes a liveness FIFO and opens it for writing, as the enrolled shell does. The
// read end is closed when the test ends; closing the writer is the test's.
func fifoWithWriter(t *testing.T) (int, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "live")
	fd, err := OpenFIFO(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { CloseFD(fd) })
	w, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fd, w
}
