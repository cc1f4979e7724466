package fgproc

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

func TestParseEtime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"00:03":       3 * time.Second,
		"1:05":        65 * time.Second,
		"02:00:01":    2*time.Hour + time.Second,
		"3-04:05:06":  3*24*time.Hour + 4*time.Hour + 5*time.Minute + 6*time.Second,
		"120-00:00:0": 120 * 24 * time.Hour,
	} {
		if got, err := parseEtime(in); err != nil || got != want {
			t.Errorf("parseEtime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "5", "a:b", "1-02:03", "-1:00", "1:-2", "1:2:3:4", "ELAPSED"} {
		if got, err := parseEtime(in); err == nil {
			t.Errorf("parseEtime(%q) = %v; want an error", in, got)
		}
	}
}

// Age of a process just started is under a second, from /proc and from
// ps alike, and grows; a process that is gone is an error.
func TestAge(t *testing.T) {
	cmd := started(t, "sleep", "30")
	for _, viaPS := range []bool{false, true} {
		if viaPS {
			defer ForcePS()()
		}
		age, err := Age(cmd.Process.Pid)
		if err != nil || age < 0 || age > 2*time.Second {
			t.Errorf("Age of a process just started (ps: %v) = %v, %v; want under 2 s", viaPS, age, err)
		}
		if own, err := Age(os.Getpid()); err != nil || own < age-time.Second {
			t.Errorf("Age of this test process (ps: %v) = %v, %v; want at least the sleep's %v, to ps's second", viaPS, own, err, age)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if age, err := Age(cmd.Process.Pid); err == nil {
		t.Errorf("Age of a process reaped = %v; want an error", age)
	}
}

// Without ps, Age through ps says so: never that the process is gone.
func TestAgeWithoutPS(t *testing.T) {
	defer ForcePS()()
	t.Setenv("PATH", t.TempDir())
	if age, err := Age(os.Getpid()); err == nil || errors.Is(err, errNoProcess) {
		t.Errorf("Age without ps = %v, %v; want an error that is not errNoProcess", age, err)
	}
}

func TestCommandString(t *testing.T) {
	for args, want := range map[string]bool{
		"bash -c cat":           true,
		"-bash":                 false,
		"bash --rcfile x -i":    false,
		"zsh -i":                false,
		"sh -ec true":           true,
		"bash -lc make":         true,
		"bash -ic make":         false,
		"bash --norc script.sh": false,
		"zsh":                   false,
		"":                      false,
	} {
		if got := commandString(strings.Fields(args)); got != want {
			t.Errorf("commandString(%q) = %v; want %v", args, got, want)
		}
	}
}

// CommandString reads a running shell's arguments, from /proc and from ps.
func TestCommandStringOfAProcess(t *testing.T) {
	// The shell says when it runs its command string: exec.Cmd.Start can
	// return before the kernel has set up the new program's arguments.
	cmd := exec.Command("sh", "-c", "echo ready; sleep 30; true")
	tmuxtest.StartSaying(t, cmd, "ready")
	for _, viaPS := range []bool{false, true} {
		if viaPS {
			defer ForcePS()()
		}
		if cs, err := CommandString(cmd.Process.Pid); err != nil || !cs {
			t.Errorf("CommandString of sh -c (ps: %v) = %v, %v; want true", viaPS, cs, err)
		}
		if cs, err := CommandString(os.Getpid()); err != nil || cs {
			t.Errorf("CommandString of this test (ps: %v) = %v, %v; want false", viaPS, cs, err)
		}
	}
}

// started starts a program that the test's end kills.
func started(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}
