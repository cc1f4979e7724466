package tmuxtest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A test's server, and the program in its pane, are gone once the test has
// ended: Start's cleanup stops the server without a tmux process, and one
// the test replaced on the same socket is stopped too.
func TestStartCleanupStopsTheServer(t *testing.T) {
	t.Parallel()
	var server, pane, replaced int
	t.Run("own", func(t *testing.T) {
		s := Start(t)
		p := s.NewSession("s", "sleep", "1000")
		server = pidOf(t, s, "", "#{pid}")
		pane = pidOf(t, s, p, "#{pane_pid}")
	})
	t.Run("replaced", func(t *testing.T) {
		s := Start(t)
		s.KillServer()
		s.NewSession("s", "sh") // a new server on the same socket
		replaced = pidOf(t, s, "", "#{pid}")
	})
	// A pane's program may write into the test's directory after the
	// server was told to stop, as a zsh writes its history when it exits.
	// This one ignores SIGHUP and creates a file there for as long as the
	// directory can be reached: the directory must be gone all the same,
	// and the writer with it.
	var writer int
	var writerStarted, dir string
	t.Run("writer", func(t *testing.T) {
		s := Start(t)
		dir = s.Dir
		p := s.NewSession("s", "bash", "-c", "trap '' HUP; while : >"+s.Dir+"/x; do :; done")
		WaitFile(t, filepath.Join(s.Dir, "x"))
		writer = pidOf(t, s, p, "#{pane_pid}")
		writerStarted = startTime(writer)
	})
	t.Cleanup(func() {
		// Only when this test fails is the writer still there (it never
		// stops by itself); the start time keeps a later process given
		// its pid out of reach.
		if writer > 0 && writerStarted != "" && startTime(writer) == writerStarted {
			syscall.Kill(writer, syscall.SIGKILL)
		}
	})
	// leftover says what remains of the writer's test directory.
	leftover := func() string {
		var left []string
		for _, d := range []string{dir, dir + "-gone"} {
			if names, err := os.ReadDir(d); !errors.Is(err, fs.ErrNotExist) {
				left = append(left, fmt.Sprintf("%s is still there, holding %d files (%v)", d, len(names), err))
			}
		}
		return strings.Join(left, "; ")
	}
	for what, pid := range map[string]int{"the server": server, "its pane's sleep": pane, "the server a test started again": replaced, "the writer": writer} {
		Eventually(t, 15*time.Second, what+" (pid "+strconv.Itoa(pid)+") exiting after its test", func() bool { return gone(pid) }, leftover)
	}
	if left := leftover(); left != "" {
		t.Errorf("after its test and its writer ended, %s", left)
	}
}

// pidOf reads a pid format of target ("" for none) from s.
func pidOf(t *testing.T, s *Server, target, format string) int {
	t.Helper()
	args := []string{"display-message", "-p"}
	if target != "" {
		args = append(args, "-t", target)
	}
	out := s.Run(append(args, format)...)
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("%s: %v (tmux printed %q)", format, err, out)
	}
	return pid
}

// startTime is a running process's, and does not change while it runs.
func TestStartTime(t *testing.T) {
	t.Parallel()
	s := Start(t)
	pid := pidOf(t, s, "", "#{pid}")
	first := startTime(pid)
	if first == "" {
		t.Fatalf("startTime(%d) of a running tmux server is empty", pid)
	}
	s.NewSession("s", "sh")
	if again := startTime(pid); again != first {
		t.Errorf("startTime(%d) changed from %s to %s while the process ran", pid, first, again)
	}
}
