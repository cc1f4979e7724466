//go:build linux

package peercred

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// childEnv makes the test binary a peer process instead of a test run:
// "stay:SOCKET" connects, says hello and waits for EOF; "leave:SOCKET"
// connects, says hello and exits at once.
const childEnv = "PEERCRED_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode, sock, ok := strings.Cut(os.Getenv(childEnv), ":"); ok {
		os.Exit(child(mode, sock))
	}
	os.Exit(m.Run())
}

func child(mode, sock string) int {
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintf(c, "hello %d\n", os.Getpid())
	if mode == "stay" {
		io.Copy(io.Discard, c)
	}
	return 0
}

// listen makes a Unix socket in a private directory.
func listen(t *testing.T) (*net.UnixListener, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, sock
}

// accept accepts one connection and reads its hello line.
func accept(t *testing.T, ln *net.UnixListener) *net.UnixConn {
	t.Helper()
	ln.SetDeadline(time.Now().Add(20 * time.Second))
	c, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startChild runs the test binary as a peer that connects to sock.
func startChild(t *testing.T, mode, sock string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: a -race binary otherwise sleeps 1 s on exit.
	cmd.Env = append(os.Environ(), childEnv+"="+mode+":"+sock, "GORACE=atexit_sleep_ms=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// readHello reads the child's first line, so the connection surely exists.
func readHello(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("read the child's hello: %v", err)
	}
	return strings.TrimSpace(line)
}

// forceFallback makes SO_PEERPIDFD answer err, as a kernel before 6.5 does,
// for the rest of the test.
func forceFallback(t *testing.T, err error) *int {
	t.Helper()
	saved := peerPidfd
	t.Cleanup(func() { peerPidfd = saved })
	calls := new(int)
	peerPidfd = func(int) (int, error) { *calls++; return -1, err }
	return calls
}

// selfPair connects this process to itself.
func selfPair(t *testing.T) *net.UnixConn {
	t.Helper()
	ln, sock := listen(t)
	client, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return accept(t, ln)
}

func checkSelf(t *testing.T) {
	t.Helper()
	p, err := FromConn(selfPair(t))
	if err != nil {
		t.Fatalf("FromConn: %v", err)
	}
	defer p.Close()
	start, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := Peer{UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), PID: os.Getpid(), PidFD: p.PidFD, StartTime: start}
	if p != want || p.PidFD < 0 {
		t.Errorf("FromConn(self) = %+v; want %+v with a pidfd", p, want)
	}
	if !Alive(p.PidFD) {
		t.Error("Alive(own pidfd) = false")
	}
	if fdflags, err := unix.FcntlInt(uintptr(p.PidFD), unix.F_GETFD, 0); err != nil || fdflags&unix.FD_CLOEXEC == 0 {
		t.Errorf("the pidfd is not close-on-exec (flags %#x, %v)", fdflags, err)
	}
}

func TestFromConnSelf(t *testing.T) {
	fd := -1
	c := selfPair(t)
	raw, _ := c.SyscallConn()
	var err error
	raw.Control(func(s uintptr) { fd, err = peerPidfd(int(s)) })
	if err != nil {
		t.Logf("this kernel has no SO_PEERPIDFD (%v): only the fallback runs here", err)
	} else {
		unix.Close(fd)
	}
	checkSelf(t)
}

func TestFromConnSelfFallback(t *testing.T) {
	for _, e := range []error{unix.ENOPROTOOPT, unix.EINVAL} {
		t.Run(e.Error(), func(t *testing.T) {
			calls := forceFallback(t, e)
			checkSelf(t)
			if *calls != 1 {
				t.Errorf("the injected SO_PEERPIDFD was called %d times; want 1", *calls)
			}
		})
	}
}

func TestFromConnChild(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fallback bool
	}{{"SO_PEERPIDFD", false}, {"pidfd_open fallback", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fallback {
				forceFallback(t, unix.ENOPROTOOPT)
			}
			ln, sock := listen(t)
			cmd := startChild(t, "stay", sock)
			c := accept(t, ln)
			if got, want := readHello(t, c), fmt.Sprintf("hello %d", cmd.Process.Pid); got != want {
				t.Fatalf("child said %q; want %q", got, want)
			}
			p, err := FromConn(c)
			if err != nil {
				t.Fatalf("FromConn: %v", err)
			}
			defer p.Close()
			start, err := StartTime(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			if p.PID != cmd.Process.Pid || p.UID != uint32(os.Getuid()) || p.StartTime != start {
				t.Errorf("FromConn = %+v; want pid %d uid %d start %d", p, cmd.Process.Pid, os.Getuid(), start)
			}
			if !Alive(p.PidFD) {
				t.Fatal("Alive = false while the child runs")
			}
			// A wait that is cancelled returns the context's error while the
			// child still runs.
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if err := WaitExit(ctx, p.PidFD); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("WaitExit on a running child = %v; want %v", err, context.DeadlineExceeded)
			}
			// Closing the connection ends the child; WaitExit sees it,
			// before and after the child is reaped.
			c.Close()
			ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := WaitExit(ctx, p.PidFD); err != nil {
				t.Fatalf("WaitExit after the child ended: %v", err)
			}
			if Alive(p.PidFD) {
				t.Error("Alive = true for an exited, unreaped child")
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v", err)
			}
			if Alive(p.PidFD) {
				t.Error("Alive = true after the child was reaped")
			}
			if err := WaitExit(ctx, p.PidFD); err != nil {
				t.Errorf("WaitExit after reaping: %v", err)
			}
		})
	}
}

// A peer that connected and exited (and was reaped) before it is identified
// gets no pidfd: whatever now holds its pid is not the peer.
func TestFromConnExitedPeer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fallback error
	}{{"SO_PEERPIDFD", nil}, {"ENOPROTOOPT fallback", unix.ENOPROTOOPT}, {"EINVAL fallback", unix.EINVAL}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fallback != nil {
				forceFallback(t, tc.fallback)
			}
			ln, sock := listen(t)
			cmd := startChild(t, "leave", sock)
			c := accept(t, ln)
			readHello(t, c)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v", err)
			}
			p, err := FromConn(c)
			if err == nil {
				p.Close()
			}
			if !errors.Is(err, ErrPeerExited) {
				t.Errorf("FromConn(exited peer) = %+v, %v; want %v", p, err, ErrPeerExited)
			}
		})
	}
}

// The fallback's pid-reuse checks, played out with made-up start times.
func TestOpenCheckedRefusesReusedPid(t *testing.T) {
	pid := os.Getpid()
	real, err := StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	now, err := bootTicks()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		why    string
		starts []uint64 // successive answers of readStartTime
		bound  uint64
		ok     bool
	}{
		{"the same owner before and after pidfd_open", []uint64{real, real}, now, true},
		{"a new owner appeared during pidfd_open", []uint64{real, real + 1}, now, false},
		{"the owner started after the connection existed", []uint64{real, real}, real - 1, false},
	} {
		saved := readStartTime
		i := 0
		readStartTime = func(int) (uint64, error) { v := tc.starts[i]; i++; return v, nil }
		fd, start, err := openChecked(pid, tc.bound)
		readStartTime = saved
		if fd >= 0 {
			unix.Close(fd)
		}
		if tc.ok != (err == nil) || tc.ok && start != real {
			t.Errorf("%s: openChecked = %d, %d, %v; want ok=%v", tc.why, fd, start, err, tc.ok)
		}
		if !tc.ok && (!errors.Is(err, ErrPeerExited) || fd != -1) {
			t.Errorf("%s: openChecked = %d, %v; want -1 and %v", tc.why, fd, err, ErrPeerExited)
		}
	}
}

func TestStartTimeOfSelf(t *testing.T) {
	got, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	now, _ := bootTicks()
	if got == 0 || got > now {
		t.Errorf("StartTime(self) = %d; want in (0, %d]", got, now)
	}
	if _, err := StartTime(1 << 30); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("StartTime(no such pid) = %v; want an error matching os.ErrNotExist", err)
	}
}

func TestBootID(t *testing.T) {
	a, err := BootID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := BootID()
	if !validBootID(a) || a != b {
		t.Errorf("BootID = %q then %q; want one stable boot id", a, b)
	}
}

func TestAliveAndWaitExitOnBadDescriptors(t *testing.T) {
	if Alive(-1) {
		t.Error("Alive(-1) = true")
	}
	const fd = 1 << 20 // above any descriptor this process has open
	if Alive(fd) {
		t.Error("Alive(closed descriptor) = true")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := WaitExit(ctx, fd); !errors.Is(err, unix.EBADF) {
		t.Errorf("WaitExit(closed descriptor) = %v; want EBADF", err)
	}
	if err := WaitExit(ctx, -1); err == nil {
		t.Error("WaitExit(-1) = nil")
	}
}

func TestWaitExitCancel(t *testing.T) {
	self, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(self)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitExit(ctx, self); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitExit(cancelled ctx) = %v; want %v", err, context.Canceled)
	}

	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- WaitExit(ctx, self) }()
	select {
	case err := <-done:
		t.Fatalf("WaitExit(self) returned %v while this process runs", err)
	case <-time.After(100 * time.Millisecond):
	}
	began := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("WaitExit after cancel = %v; want %v", err, context.Canceled)
		}
		if d := time.Since(began); d > 2*time.Second {
			t.Errorf("WaitExit took %v to notice the cancel", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("WaitExit did not return after cancel")
	}
}
