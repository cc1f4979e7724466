// Package tmuxtest starts private tmux servers and zsh panes for tests,
// and waits for what they do with Eventually, a bounded poll.
//
// Each Server runs on a socket in its own short temporary directory (never
// the default socket) with a test configuration, and is killed in
// t.Cleanup. Shells start with ZDOTDIR pointing at a temporary rc, and
// HOME at an empty directory, so a developer's own zsh and bash setup
// never takes part. Tests that need tmux or zsh
// skip when it is missing, unless LIBTMUX_MCP_REQUIRE_INTEGRATION=1 (set by
// CI), which makes a missing tool a failure. Load tests (NeedLoad) run only
// when asked for, and always in CI.
package tmuxtest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// RequireEnv names the variable CI sets so that no test skips:
// LIBTMUX_MCP_REQUIRE_INTEGRATION=1 makes a missing tmux or zsh a failure
// and runs the load tests (NeedLoad).
const RequireEnv = "LIBTMUX_MCP_REQUIRE_INTEGRATION"

// Need skips (or, in CI, fails) the test when a program is missing.
func Need(t testing.TB, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			msg := fmt.Sprintf("%s is not installed (apt-get install tmux zsh)", p)
			if os.Getenv(RequireEnv) == "1" {
				t.Fatal(msg + "; " + RequireEnv + "=1 makes this a failure")
			}
			t.Skip(msg)
		}
	}
}

// Config is the tmux configuration test servers start with. (Not a global
// window-size manual: tmux 3.3a to 3.6a crash on new-session -d under it.)
const Config = `set -s exit-empty off
set -g history-limit 50000
set -g default-terminal screen
set -g status off
`

// Server is a private tmux server.
type Server struct {
	t       testing.TB
	Dir     string // private temporary directory (short path)
	Socket  string // absolute socket path
	Client  *tmux.Client
	ZDOTDIR string
}

// Start starts a tmux server with Config on a fresh socket.
func Start(t testing.TB) *Server {
	t.Helper()
	Need(t, "tmux")
	dir, err := os.MkdirTemp("", "lt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeDir(t, dir) })
	conf := filepath.Join(dir, "tmux.conf")
	zdot := filepath.Join(dir, "zdot")
	if err := os.Mkdir(zdot, 0o700); err != nil {
		t.Fatal(err)
	}
	// The panes' HOME is a directory of the test's own: a login bash reads
	// no developer's ~/.profile or ~/.bashrc (a slow one costs every pane
	// its start-up, and a pane killed while it runs may leave its locks
	// behind), and less or a shell's history never write to the real home.
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	zshrc := "PS1='%% '\nRPROMPT=\nHISTFILE=" + filepath.Join(dir, "hist") + "\nSAVEHIST=100\nHISTSIZE=100\nsetopt INC_APPEND_HISTORY\nunsetopt BEEP BANG_HIST\n"
	for name, body := range map[string]string{conf: Config + "set-environment -g HOME '" + home + "'\n", filepath.Join(zdot, ".zshrc"): zshrc} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := &Server{t: t, Dir: dir, Socket: filepath.Join(dir, "s"), ZDOTDIR: zdot}
	s.Client, err = tmux.NewClient(tmux.Route{SocketPath: s.Socket, Config: conf}, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Client.RunConfig(context.Background(), conf, "start-server", ";", "display-message", "-p", "#{pid}")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("the new server's pid: %v (it printed %q)", err, out)
	}
	started := startTime(pid)
	t.Cleanup(func() { s.stop(pid, started) })
	return s
}

// stop ends the server at the end of a test. While the process Start saw
// is still there it gets SIGTERM, which is all tmux's kill-server does
// (the server sends it to itself), without starting a tmux process: a test
// pays about 10 ms of CPU on a 2-core machine for each one. When that
// process is gone (a zombie too: it may never be reaped here), or its
// start time cannot be read (no /proc), or has changed (another process
// took its pid), kill-server asks whatever server is on the socket now: a
// test may have started another one there.
func (s *Server) stop(pid int, started string) {
	if f, err := statFields(pid); err == nil && len(f) >= 20 && f[0] != "Z" && started != "" && f[19] == started {
		if err := syscall.Kill(pid, syscall.SIGTERM); err == nil {
			return
		}
	}
	exec.Command("tmux", "-S", s.Socket, "kill-server").Run()
}

// removeDir removes a test's directory (a test server's, or one of
// ShortTempDir's) when the test ends. Programs it started may still write
// there then: a shell writes its history file (zsh's HISTFILE in a
// server's directory, bash's in its home) as it exits, and a background
// job a test left may write its mark. A file created after RemoveAll had
// read the directory made its last rmdir fail, and such tests left a
// directory behind (hundreds a day here, each holding "hist" or a
// forger's mark). Renamed first, the directory can no longer be reached
// by the absolute paths those programs were given, so what RemoveAll reads
// is all it holds. A directory the test removed itself is no error.
// (TestStartCleanupStopsTheServer plays a program that keeps writing.)
func removeDir(t testing.TB, dir string) {
	gone := dir + "-gone"
	if err := os.Rename(dir, gone); errors.Is(err, fs.ErrNotExist) {
		return
	} else if err != nil {
		t.Errorf("moving the test's directory aside to remove it: %v", err)
		gone = dir
	}
	// A second pass takes a file whose creation had begun before the
	// rename and ended after the first pass read the directory.
	if os.RemoveAll(gone) != nil {
		if err := os.RemoveAll(gone); err != nil {
			t.Errorf("removing the test's directory: %v", err)
		}
	}
}

// startTime returns process pid's start time in clock ticks since boot
// (field 22 of /proc/PID/stat), which tells it apart from a later process
// given the same pid; "" when it cannot be read.
func startTime(pid int) string {
	fields, err := statFields(pid)
	if err != nil || len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// Run runs a tmux command on the server and fails the test on error.
func (s *Server) Run(args ...string) string {
	s.t.Helper()
	out, err := s.Client.Run(context.Background(), args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// KillServer kills the server and waits, at most 15 s, until its process
// has exited: kill-server answers before the server is gone, and a server
// started again on the socket meanwhile would meet the old one on its way
// out ("server exited unexpectedly").
func (s *Server) KillServer() {
	s.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(s.Run("display-message", "-p", "#{pid}")))
	if err != nil {
		s.t.Fatalf("the server's pid: %v", err)
	}
	s.Run("kill-server")
	Eventually(s.t, 15*time.Second, fmt.Sprintf("tmux server %d exiting", pid), func() bool { return gone(pid) })
}

// gone reports whether process pid has exited. A zombie counts: it holds
// no descriptor any more (the socket included), and whoever inherited it
// may never reap it.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	fields, err := statFields(pid)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	return len(fields) > 0 && fields[0] == "Z"
}

// statFields returns the fields of /proc/PID/stat that follow the command
// name (which may itself hold ") "): fields[0] is field 3, the state.
func statFields(pid int) ([]string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat has no command name: %q", pid, stat)
	}
	return strings.Fields(string(stat[i+1:])), nil
}

// KillPaneProcess sends SIGKILL to the process a pane started (its
// #{pane_pid}) straight from the test, not through a tmux job.
func (s *Server) KillPaneProcess(pane string) {
	s.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(s.Run("display-message", "-p", "-t", pane, "#{pane_pid}")))
	if err != nil {
		s.t.Fatalf("pane_pid of %s: %v", pane, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		s.t.Fatalf("kill %d (%s): %v", pid, pane, err)
	}
}

// NewSession creates a detached 120x30 session running command (the
// default shell when empty) and returns its first pane id.
func (s *Server) NewSession(name string, command ...string) string {
	s.t.Helper()
	args := []string{"-P", "-F", "#{pane_id}"}
	if name != "" {
		args = append(args, "-s", tmux.Literal(name))
	}
	out := s.SizedSession(120, 30, append(args, command...)...)
	pane := strings.TrimSpace(out)
	if !strings.HasPrefix(pane, "%") {
		// Seen once on 3.7c under a load average of 10, with a pane
		// printing at full speed from its first instant.
		s.t.Fatalf("new-session -P -F '#{pane_id}' printed %q, not a pane id", out)
	}
	return pane
}

// on32 is a format true on tmux 3.2 and 3.2a.
const on32 = "#{m:3.2*,#{version}}"

// SizedSession runs new-session -d -x width -y height with args (flags,
// then the pane's command) and returns what it printed: the session is
// that size before its first program starts, on every tmux. tmux 3.2a
// makes a detached session 80x24 whatever -x and -y say unless the
// window-size option is manual, and a program started at 80x24 may miss
// the resize that follows a moment later: a zsh did, and wrapped its
// command line at 80 columns in a 150-column pane (TestEnrollSendsHello,
// once in a CI run). So on 3.2 only, the same command list makes
// window-size manual around new-session and unsets it after (3.3a to
// 3.6a crash on new-session -d under a global manual).
func (s *Server) SizedSession(width, height int, args ...string) string {
	s.t.Helper()
	list := []string{"if-shell", "-F", on32, "set -g window-size manual", ";",
		"new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height)}
	list = append(list, args...)
	return s.Run(append(list, ";", "if-shell", "-F", on32, "set -gu window-size")...)
}

// ZshSession creates a session running an interactive zsh with the test rc
// and waits for its prompt. It returns the pane id.
func (s *Server) ZshSession(name string) string {
	s.t.Helper()
	Need(s.t, "zsh")
	pane := s.NewSession(name, "env", "ZDOTDIR="+s.ZDOTDIR, "zsh", "-i")
	// capture-pane drops the prompt's trailing space: the prompt is "%".
	s.WaitFor(pane, func(screen string) bool { return strings.HasPrefix(strings.TrimSpace(screen), "%") })
	return pane
}

// Capture returns the pane's visible text.
func (s *Server) Capture(pane string) string {
	s.t.Helper()
	return s.Run("capture-pane", "-p", "-t", pane)
}

// CaptureFlat returns the pane's visible text as one string, without line
// breaks: what to search for a typed command line, which is cut wherever
// the pane's width falls. capture-pane -J alone does not join it: zsh's
// line editor breaks a long line itself instead of letting the terminal
// wrap it. (The lines are captured with -J, which keeps the spaces at their
// ends, so the text runs on across a break as it was typed.)
func (s *Server) CaptureFlat(pane string) string {
	s.t.Helper()
	return strings.ReplaceAll(s.Run("capture-pane", "-p", "-J", "-t", pane), "\n", "")
}

// WaitForText waits, for at most 15 s, until text shows in the pane's
// CaptureFlat.
func (s *Server) WaitForText(pane, text string) {
	s.t.Helper()
	var screen string
	Eventually(s.t, 15*time.Second, "pane "+pane+" showing "+strconv.Quote(text), func() bool {
		screen = s.Run("capture-pane", "-p", "-J", "-t", pane)
		return strings.Contains(strings.ReplaceAll(screen, "\n", ""), text)
	}, func() string { return "it shows (wrapped lines joined):\n" + screen })
}

// WaitFor polls the pane's screen until ok accepts it, for at most 15 s,
// and fails the test with the screen when it never does.
func (s *Server) WaitFor(pane string, ok func(screen string) bool) string {
	s.t.Helper()
	var screen string
	Eventually(s.t, 15*time.Second, "pane "+pane+" reaching the expected state", func() bool {
		screen = s.Capture(pane)
		return ok(screen)
	}, func() string { return "it shows:\n" + screen })
	return screen
}

// Type sends text literally, then Enter when enter is true, in one tmux
// process (a process costs a test far more than the keys do).
func (s *Server) Type(pane, text string, enter bool) {
	s.t.Helper()
	// tmux.Arg: a text ending in ';' would otherwise end the command.
	args := []string{"send-keys", "-t", pane, "-l", tmux.Arg(text)}
	if enter {
		args = append(args, ";", "send-keys", "-t", pane, "Enter")
	}
	s.Run(args...)
}

// WaitCommand polls until the pane's foreground program is command, for
// at most 15 s (the screen can show a typed command before it runs).
func (s *Server) WaitCommand(pane, command string) {
	s.t.Helper()
	var got string
	Eventually(s.t, 15*time.Second, fmt.Sprintf("pane %s running %q", pane, command), func() bool {
		got = strings.TrimSpace(s.Run("display-message", "-p", "-t", pane, "#{pane_current_command}"))
		return got == command
	}, func() string { return fmt.Sprintf("it runs %q", got) })
}

// AttachPerson attaches a person's client to session: a real terminal
// client, run by a nested tmux in a pane of a session of its own. It waits
// until the client is attached and returns that viewer pane, where keys
// typed are the person's keystrokes.
func (s *Server) AttachPerson(session string) string {
	s.t.Helper()
	viewer := s.NewSession("viewer-"+session, "env", "-u", "TMUX", "tmux", "-S", s.Socket, "attach", "-t", "="+session)
	s.waitClient("0 " + session + "\n")
	return viewer
}

// AttachControl attaches a control-mode client (a program, not a person)
// to session, waits until it is attached, and detaches it in t.Cleanup.
func (s *Server) AttachControl(session string) {
	s.t.Helper()
	ctl := exec.Command("tmux", "-S", s.Socket, "-C", "attach", "-t", "="+session)
	in, err := ctl.StdinPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { in.Close(); ctl.Process.Kill(); ctl.Wait() })
	s.waitClient("1 " + session + "\n")
}

// waitClient polls list-clients until a row equals want, for at most 15 s.
func (s *Server) waitClient(want string) {
	s.t.Helper()
	Eventually(s.t, 15*time.Second, fmt.Sprintf("a client %q attached", strings.TrimSpace(want)), func() bool {
		return strings.Contains(s.Run("list-clients", "-F", "#{client_control_mode} #{session_name}"), want)
	}, func() string { return "clients: " + s.Run("list-clients") })
}

// ExtraFDs lists a process's open descriptors above 2 ("N -> target"),
// once any it opens for itself are closed again: a program such as sleep
// opens and closes locale files as it starts, while a descriptor it
// inherited stays. It reads /proc/PID/fd until only 0-2 are left or
// settle has passed, and returns what is left over 2.
func ExtraFDs(t testing.TB, pid int, settle time.Duration) []string {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	deadline := time.Now().Add(settle)
	for {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var extra []string
		for _, e := range ents {
			if n, _ := strconv.Atoi(e.Name()); n > 2 {
				target, _ := os.Readlink(dir + "/" + e.Name())
				extra = append(extra, e.Name()+" -> "+target)
			}
		}
		if len(extra) == 0 || time.Now().After(deadline) {
			return extra
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: nothing signals a close
	}
}

// Eventually asks again pollFirst after its first look, then after twice
// the interval before each time, up to pollMost: state such as a pane's
// screen or a process table changes without a signal a test can wait on,
// and a look is often a tmux process (about 10 ms of CPU on a 2-core
// machine), so a state reached at once is seen within milliseconds while
// a wait of seconds costs ten looks a second, not fifty.
const (
	pollFirst = 10 * time.Millisecond
	pollMost  = 100 * time.Millisecond
)

// Eventually calls ok (at the intervals above) until it returns true, for at most
// timeout, and otherwise fails the test: "<what> did not happen within
// <timeout>", followed by what each show returns then (a pane's screen,
// the state last seen). ok runs on the test goroutine and may itself fail
// the test. It is the one way tests here wait for a condition; a sleep is
// never the synchronization.
func Eventually(t testing.TB, timeout time.Duration, what string, ok func() bool, show ...func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	interval := pollFirst
	for !ok() {
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("%s did not happen within %s", what, timeout)
			for _, f := range show {
				msg += "; " + f()
			}
			t.Fatal(msg)
		}
		time.Sleep(interval) // the polling interval, not synchronization
		interval = min(2*interval, pollMost)
	}
}

// TimingEnv names the variable that turns on the assertions about figures
// (CPU time, memory, how long something took) kept beside functional tests:
// LIBTMUX_MCP_TIMING_TESTS=1. They measure this machine as much as the
// code, so a plain go test leaves them out; .ci/run runs them once, on an
// otherwise idle step.
const TimingEnv = "LIBTMUX_MCP_TIMING_TESTS"

// Timing reports whether LIBTMUX_MCP_TIMING_TESTS=1 asks for the figures'
// assertions.
func Timing() bool { return os.Getenv(TimingEnv) == "1" }

// NeedTiming skips a test that asserts a figure unless
// LIBTMUX_MCP_TIMING_TESTS=1.
func NeedTiming(t testing.TB) {
	t.Helper()
	if !Timing() {
		t.Skip("asserts a figure of this machine; run with " + TimingEnv + "=1")
	}
}

// LoadEnv names the variable that runs the load tests: the tests whose
// subject is the server under a load (cmd/libtmux-mcp's hostile-frame tests,
// thousands of frames and 130 concurrent waits, and its 1,000-run and
// 1,000-wait leak tests). They cost a fifth to a quarter of a whole go
// test ./... on a 2-core machine, so a plain go test leaves them out;
// LIBTMUX_MCP_LOAD_TESTS=1 runs them, and so does RequireEnv (CI, where
// nothing skips).
const LoadEnv = "LIBTMUX_MCP_LOAD_TESTS"

// NeedLoad skips a load test unless LoadEnv=1 or RequireEnv=1, and always
// under -short.
func NeedLoad(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("a load test; skipped with -short")
	}
	if os.Getenv(LoadEnv) != "1" && os.Getenv(RequireEnv) != "1" {
		t.Skip("a load test; run with " + LoadEnv + "=1 (CI runs it)")
	}
}

// ReleaseSuiteEnv names the variable .ci/suite-job sets in each tmux
// release's suite of CI: LIBTMUX_MCP_RELEASE_SUITE=1.
const ReleaseSuiteEnv = "LIBTMUX_MCP_RELEASE_SUITE"

// NotPerRelease skips a test in a tmux release's suite of CI
// (ReleaseSuiteEnv=1) when its subject is the same on every tmux release:
// the transports, the broker's peer credentials, the helper, a platform's
// path. subject says which, in the skip message. Every other run keeps it:
// a plain go test ./..., and CI's steps on the machine's own tmux (the
// -race step, or the step after it for a test too costly under -race). A
// release suite still runs the tests that take the same paths through tmux.
func NotPerRelease(t testing.TB, subject string) {
	t.Helper()
	if os.Getenv(ReleaseSuiteEnv) == "1" {
		t.Skip("its subject (" + subject + ") is the same on every tmux release: CI runs it once, on the machine's own tmux")
	}
}

// ShortTempDir makes a private (0700) directory named from pattern as
// os.MkdirTemp does, with a short path under the system's temporary
// directory: tmux and broker socket paths must stay under 108 bytes, and
// t.TempDir's can be longer. It is removed in t.Cleanup (removeDir).
func ShortTempDir(t testing.TB, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeDir(t, dir) })
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WaitFile waits until path exists, for at most 20 s, and fails the test
// with what show says otherwise.
func WaitFile(t testing.TB, path string, show ...func() string) {
	t.Helper()
	Eventually(t, 20*time.Second, path+" appearing", func() bool {
		_, err := os.Stat(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return err == nil
	}, show...)
}

// WaitFileHolds waits until path holds exactly want, for at most 20 s, and
// fails the test with what it holds otherwise.
func WaitFileHolds(t testing.TB, path, want string) {
	t.Helper()
	var got []byte
	Eventually(t, 20*time.Second, fmt.Sprintf("%s holding %d bytes", path, len(want)), func() bool {
		var err error
		if got, err = os.ReadFile(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(got) == want
	}, func() string { return fmt.Sprintf("it holds %d:\n%.300q", len(got), got) })
}

// CountProcesses counts the processes whose arguments include every one of
// args (each a whole argument), from /proc: the tmux wait-for processes on
// a test's socket, say. It fails t when /proc cannot be listed.
func CountProcesses(t testing.TB, args ...string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue // not a process, or gone since the listing
		}
		have := strings.Split(string(cmdline), "\x00")
		if !slices.ContainsFunc(args, func(a string) bool { return !slices.Contains(have, a) }) {
			n++
		}
	}
	return n
}
