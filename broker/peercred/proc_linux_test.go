//go:build linux

package peercred

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
	go func() { done <- WaitExit(context.Background(), fd) }()
	w.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WaitExit on the FIFO = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitExit did not return when the last writer closed")
	}
	if !Hungup(fd) {
		t.Error("no hangup after the last writer closed it")
	}
}

func TestPeerGone(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[0]), "ours")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	if PeerGone(uc) {
		t.Error("gone while the peer holds its end")
	}
	unix.Close(fds[1])
	if !PeerGone(uc) {
		t.Error("not gone after the peer closed its end")
	}
}
