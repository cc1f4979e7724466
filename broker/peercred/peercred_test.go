//go:build linux

package peercred

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseStartTime(t *testing.T) {
	for _, tc := range []struct {
		why, stat string
		want      uint64
		ok        bool
	}{
		{"plain name", "123 (zsh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 19 20", 4242, true},
		{"name with spaces and parens", "123 (a) b) (c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 77 19", 77, true},
		{"no closing paren", "123 (zsh S 1", 0, false},
		{"too short", "1 (x) S 1 2", 0, false},
	} {
		got, err := parseStartTime(tc.stat)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s: got %d, %v; want %d ok=%v", tc.why, got, err, tc.want, tc.ok)
		}
	}
}

func pair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "s"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return server, client
}

func checkSelf(t *testing.T) {
	t.Helper()
	server, _ := pair(t)
	p, err := FromConn(server)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start, _ := StartTime(os.Getpid())
	if p.UID != uint32(os.Getuid()) || p.PID != os.Getpid() || p.StartTime != start || p.PidFD < 0 {
		t.Errorf("peer = %+v; want uid %d pid %d start %d and a pidfd", p, os.Getuid(), os.Getpid(), start)
	}
	if !Alive(p.PidFD) {
		t.Error("Alive(self) = false")
	}
}

func TestFromConnWithPeerPidfd(t *testing.T) { checkSelf(t) }

func TestFromConnFallsBackToPidfdOpen(t *testing.T) {
	saved := peerPidfd
	t.Cleanup(func() { peerPidfd = saved })
	called := false
	peerPidfd = func(int) (int, error) { called = true; return -1, unix.ENOPROTOOPT }
	checkSelf(t)
	if !called {
		t.Error("the injected SO_PEERPIDFD was not consulted")
	}
}

func TestWaitExitSeesTheProcessEnd(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := WaitExit(ctx, pidfd); err == nil {
		t.Fatal("WaitExit returned while the process runs")
	}
	cmd.Process.Kill()
	cmd.Wait()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if err := WaitExit(ctx2, pidfd); err != nil {
		t.Fatalf("WaitExit after kill: %v", err)
	}
	if Alive(pidfd) {
		t.Error("Alive after exit = true")
	}
}

func TestProcessGenerationChangesWithStart(t *testing.T) {
	a := ProcessGeneration("boot", 10, 100)
	if len(a) != 32 || a == ProcessGeneration("boot", 10, 101) || a == ProcessGeneration("boot2", 10, 100) {
		t.Errorf("generations do not separate processes: %s", a)
	}
}
