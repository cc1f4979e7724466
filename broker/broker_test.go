package broker

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/privfile"
	"github.com/libtmux/libtmux-mcp/enroll"
)

// newRegistry is an empty registry: no invitations.
func newRegistry(t *testing.T) *enroll.Registry {
	t.Helper()
	reg, err := enroll.NewRegistry(nil, nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// listenBroker makes a broker with reg on a new Listener; the caller closes it.
func listenBroker(t *testing.T, reg *enroll.Registry) *Broker {
	t.Helper()
	ln, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(ln, Config{Registry: reg})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	return b
}

// TestNewZeroConfigWorks checks that a Config that leaves the deadlines zero gets working
// defaults, not a deadline that has already passed (every run would answer not_at_prompt or
// timed_out at once).
func TestNewZeroConfigWorks(t *testing.T) {
	b := listenBroker(t, newRegistry(t))
	defer b.Close()
	if b.cfg.ShellAnswer != DefaultShellAnswer || b.cfg.RunTimeout != DefaultRunTimeout {
		t.Errorf("New(zero Config): ShellAnswer %s, RunTimeout %s; want %s and %s", b.cfg.ShellAnswer, b.cfg.RunTimeout, DefaultShellAnswer, DefaultRunTimeout)
	}
}

// sweep removes only broker directories of this user whose lock no process holds: not a
// locked one, one without a lock file, one with another name or mode, or a symlink to one.
func TestSweepRemovesOnlyDeadOwnDirectories(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode, lock bool) string {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, mode)
		if lock {
			if err := os.WriteFile(filepath.Join(dir, lockName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dead := mk(dirPrefix+"dead", 0o700, true)
	live := mk(dirPrefix+"live", 0o700, true)
	noLock := mk(dirPrefix+"nolock", 0o700, false)
	open := mk(dirPrefix+"open", 0o755, true)
	other := mk("other-dead", 0o700, true)
	link := filepath.Join(base, dirPrefix+"link")
	if err := os.Symlink(dead, link); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(filepath.Join(live, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if ok, err := privfile.TryLock(held); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	sweep(base)
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("%s: a dead process's directory survived (%v)", dead, err)
	}
	for _, keep := range []string{live, noLock, open, other, link} {
		if _, err := os.Lstat(keep); err != nil {
			t.Errorf("%s was removed (%v)", keep, err)
		}
	}
}

// A private XDG_RUNTIME_DIR (0700, ours) under a directory another user may write is not used:
// that user could rename it and plant the files the person is told to source.
func TestPrivateBaseRefusesAnUntrustedRuntimeDir(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o777); err != nil { // writable by all, not sticky
		t.Fatal(err)
	}
	run := filepath.Join(parent, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", run)
	if got := privfile.PrivateBase(); got == run {
		t.Errorf("privfile.PrivateBase() = %s, a directory under the world-writable %s; want the temporary directory", got, parent)
	}
}

// Close while connections arrive: every goroutine Serve starts is one Close waits for, or none
// starts (run with -race: counting one after Close began waiting is a data race on the count).
func TestCloseWhileConnectionsArrive(t *testing.T) {
	reg := newRegistry(t)
	for range 50 {
		b := listenBroker(t, reg)
		served := make(chan error, 1)
		go func() { served <- b.Serve(context.Background()) }()
		sock := b.l.sock
		stop := make(chan struct{})
		var dialers sync.WaitGroup
		dialed := make(chan struct{}, 64)
		for range 4 {
			dialers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if c, err := net.Dial("unix", sock); err == nil {
						c.Close()
						select {
						case dialed <- struct{}{}:
						default:
						}
					}
				}
			})
		}
		<-dialed // connections are arriving
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		close(stop)
		dialers.Wait()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return within 10 s of Close")
		}
	}
}
