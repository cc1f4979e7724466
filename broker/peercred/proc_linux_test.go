//go:build linux

package peercred

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

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

// ReadCred names the process that wrote each read, whoever holds a copy of the descriptor: bytes
// written before the accept carry their writer (PassCred is on the listener), and a child that
// inherited the descriptor is told apart from the process that connected.
func TestReadCredNamesTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := PassCred(ln); err != nil {
		t.Fatal(err)
	}
	theirs, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	if _, err := theirs.Write([]byte("mine\n")); err != nil {
		t.Fatal(err)
	}
	uc, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	buf := make([]byte, 64)
	n, pid, err := ReadCred(uc, buf)
	if err != nil || string(buf[:n]) != "mine\n" || pid != os.Getpid() {
		t.Fatalf("ReadCred = %q, pid %d, %v; want %q from this process (%d)", buf[:n], pid, err, "mine\n", os.Getpid())
	}
	f, err := theirs.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("/bin/sh", "-c", `printf 'child\n' >&3`)
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	n, pid, err = ReadCred(uc, buf)
	if err != nil || string(buf[:n]) != "child\n" || pid != cmd.Process.Pid {
		t.Fatalf("ReadCred = %q, pid %d, %v; want %q from the child (%d)", buf[:n], pid, err, "child\n", cmd.Process.Pid)
	}
}
