//go:build linux

package shellsetup

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// The harness: each test gets its own tmux server on a private socket with
// no config, one zsh pane whose ZDOTDIR holds a minimal .zshrc, and plays
// the broker itself on a Unix socket in a private directory whose name
// holds a single quote and spaces (so every path in the rendered file goes
// through quote). It synchronizes on protocol lines and on polled pane
// state with deadlines, never on sleeps.

const (
	waitLong = 20 * time.Second       // for anything a slow machine under -race must still do
	quietFor = 500 * time.Millisecond // how long "nothing arrives" is watched
)

// sh is one tmux server (from internal/tmuxtest) with one zsh pane.
type sh struct {
	t    *testing.T
	ts   *tmuxtest.Server
	dir  string // short private directory: .zshrc, history
	pane string // %N
	pid  int    // #{pane_pid}
	hist string // HISTFILE
}

// newShell starts a private tmux server with one zsh pane and waits for
// its prompt. extraRC is appended to the .zshrc.
func newShell(t *testing.T, extraRC string) *sh {
	t.Helper()
	ts := tmuxtest.Start(t)
	tmuxtest.Need(t, "zsh")
	dir := tmuxtest.ShortTempDir(t, "ss")
	s := &sh{t: t, ts: ts, dir: dir, hist: filepath.Join(dir, "hist")}
	rc := "PS1='%% '\nHISTFILE=" + quote(s.hist) + "\nSAVEHIST=100\nHISTSIZE=100\nsetopt INC_APPEND_HISTORY\n" + extraRC
	if err := os.WriteFile(filepath.Join(dir, ".zshrc"), []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	// The pane's zsh gets this rc and a UTF-8 locale whatever the test's
	// own environment holds.
	out := ts.SizedSession(150, 50, "-P", "-F", "#{pane_id} #{pane_pid}",
		"--", "env", "-u", "HISTFILE", "-u", "LC_ALL", "-u", "LC_CTYPE",
		"ZDOTDIR="+dir, "LANG=C.UTF-8", "zsh", "-i") // env execs zsh: the pane's pid is the shell's
	if _, err := fmt.Sscanf(out, "%s %d", &s.pane, &s.pid); err != nil {
		t.Fatalf("new-session printed %q: %v", out, err)
	}
	s.waitPrompt(0)
	return s
}

// tmux runs one tmux command on this server; its stderr is in the error.
func (s *sh) tmux(args ...string) (string, error) {
	return s.ts.Client.Run(context.Background(), args...)
}

func (s *sh) must(args ...string) string {
	s.t.Helper()
	out, err := s.tmux(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// screen is the whole pane history and screen, wrapped rows joined into
// the lines that were printed (so no test depends on the pane's width),
// trailing spaces and blank lines dropped (tmux 3.2a keeps a joined row's
// trailing spaces; later versions do not).
func (s *sh) screen(extra ...string) string {
	s.t.Helper()
	out := s.must(append([]string{"capture-pane", "-p", "-J", "-t", s.pane, "-S", "-"}, extra...)...)
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// lines is screen split into lines.
func (s *sh) lines() []string { return strings.Split(s.screen(), "\n") }

// waitFor polls the pane until ok holds, or fails showing the pane.
func (s *sh) waitFor(what string, ok func(lines []string) bool) []string {
	s.t.Helper()
	var l []string
	tmuxtest.Eventually(s.t, waitLong, what, func() bool {
		l = s.lines()
		return ok(l)
	}, func() string { return "the pane shows:\n" + strings.Join(l, "\n") })
	return l
}

// promptLines counts every line that begins with the prompt.
func promptLines(lines []string) int {
	n := 0
	for _, l := range lines {
		if l == "%" || strings.HasPrefix(l, "% ") {
			n++
		}
	}
	return n
}

// waitPrompt waits for an empty prompt on the last line, after more than
// `after` prompt lines in all.
func (s *sh) waitPrompt(after int) []string {
	s.t.Helper()
	return s.waitFor("a fresh prompt", func(l []string) bool {
		return l[len(l)-1] == "%" && promptLines(l) > after
	})
}

// typeLine types text literally and presses Enter, then waits for the next
// empty prompt. It returns the lines printed after the typed line.
func (s *sh) typeLine(text string) []string {
	s.t.Helper()
	before := promptLines(s.lines())
	s.must("send-keys", "-t", s.pane, "-l", text)
	s.must("send-keys", "-t", s.pane, "Enter")
	l := s.waitPrompt(before)
	// The output sits between the typed line's echo and the final prompt.
	// The echo starts on the last "% " line before the final prompt and
	// takes as many rows as the pane's width made of it (the line editor
	// wraps it itself, so a joined capture cannot tell): consume rows
	// until they spell the typed line.
	echo := strings.ReplaceAll("% "+text, " ", "")
	for i := len(l) - 2; i >= 0; i-- {
		if !strings.HasPrefix(l[i], "% ") {
			continue
		}
		got := ""
		for j := i; j < len(l)-1; j++ {
			got += strings.ReplaceAll(l[j], " ", "")
			if got == echo {
				return l[j+1 : len(l)-1]
			}
		}
	}
	s.t.Fatalf("the pane does not show the typed line %q:\n%s", text, strings.Join(l, "\n"))
	return nil
}

// typeText types text literally without Enter and waits until the prompt
// line shows it.
func (s *sh) typeText(text string) {
	s.t.Helper()
	s.must("send-keys", "-t", s.pane, "-l", text)
	s.waitFor("the prompt to show "+text, func(l []string) bool { return l[len(l)-1] == "% "+text })
}

// keys sends named keys.
func (s *sh) keys(k ...string) {
	s.t.Helper()
	s.must(append([]string{"send-keys", "-t", s.pane}, k...)...)
}

// keysRead sends keys, as keys does, and waits until the shell has read n
// more bytes (its rchar in /proc/PID/io): send-keys returns once tmux has
// queued the keys, not once the shell has them, so a message sent to the
// shell next could otherwise reach it first.
func (s *sh) keysRead(n int, k ...string) {
	s.t.Helper()
	before := readChars(s.t, s.pid)
	s.keys(k...)
	var now int
	tmuxtest.Eventually(s.t, 10*time.Second, fmt.Sprintf("the shell reading the %d bytes of %v", n, k), func() bool {
		now = readChars(s.t, s.pid)
		return now-before >= n
	}, func() string { return fmt.Sprintf("it read %d bytes", now-before) })
}

// readChars is the bytes pid has read so far (rchar in /proc/PID/io).
func readChars(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("/proc/%d/io: %q", pid, line)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/io has no rchar:\n%s", pid, b)
	return 0
}

// paneFormat reads one format of the pane.
func (s *sh) paneFormat(f string) string {
	s.t.Helper()
	return strings.TrimSpace(s.must("display-message", "-p", "-t", s.pane, f))
}

// broker is the test's stand-in for the broker: a listener in a private
// 0700 directory, plus a fake helper script there.
type broker struct {
	t      *testing.T
	dir    string
	sock   string
	helper string
	ln     *net.UnixListener
}

// fakeHelper reports on fd 3 its argument, its pid, where its fds 0-2
// lead, how many sockets and liveness FIFOs it holds (read from /proc in command
// substitutions, which leave its own descriptors as they are), then holds
// the connection until the broker closes it.
const fakeHelper = `#!/bin/sh
fd=/proc/$$/fd
in=$(readlink $fd/0) out=$(readlink $fd/1) err=$(readlink $fd/2)
socks=$(for f in $fd/*; do readlink "$f"; done | grep -c '^socket:')
fifos=$(for f in $fd/*; do readlink "$f"; done | grep -c '/live-')
printf 'helper %s %s %s %s %s %s %s\n' "$1" "$$" "$in" "$out" "$err" "$socks" "$fifos" >&3
cat <&3 >/dev/null
`

func newBroker(t *testing.T) *broker {
	t.Helper()
	dir := tmuxtest.ShortTempDir(t, "ss it's ")
	b := &broker{t: t, dir: dir, sock: filepath.Join(dir, "b.sock"), helper: filepath.Join(dir, "the helper")}
	tmuxtest.WriteExecutable(t, b.helper, fakeHelper)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: b.sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	b.ln = ln
	return b
}

// conn is one connection from the shell.
type conn struct {
	t *testing.T
	c *net.UnixConn
	r *bufio.Reader
}

// accept waits for the shell to connect.
func (b *broker) accept() *conn {
	b.t.Helper()
	b.ln.SetDeadline(time.Now().Add(waitLong))
	c, err := b.ln.AcceptUnix()
	if err != nil {
		b.t.Fatalf("no connection from the shell: %v", err)
	}
	b.t.Cleanup(func() { c.Close() })
	return &conn{t: b.t, c: c, r: bufio.NewReader(c)}
}

// noConnection asserts that nobody connects for quietFor.
func (b *broker) noConnection() {
	b.t.Helper()
	b.ln.SetDeadline(time.Now().Add(quietFor))
	if c, err := b.ln.AcceptUnix(); err == nil {
		c.Close()
		b.t.Fatal("the shell connected; want no connection")
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		b.t.Fatal(err)
	}
}

// line reads one line, failing after waitLong.
func (c *conn) line() string {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(waitLong))
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read a line from the shell: %v (partial %q)", err, l)
	}
	return strings.TrimSuffix(l, "\n")
}

// expect reads one line and compares it.
func (c *conn) expect(want string) {
	c.t.Helper()
	if got := c.line(); got != want {
		c.t.Fatalf("the shell said %q; want %q", got, want)
	}
}

// quiet asserts that no byte arrives for d.
func (c *conn) quiet(d time.Duration) {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(d))
	if l, err := c.r.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) || l != "" {
		c.t.Fatalf("the shell said %q (%v); want silence for %v", l, err, d)
	}
}

// eof asserts that the shell closed the connection.
func (c *conn) eof() {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(waitLong))
	if l, err := c.r.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		c.t.Fatalf("read %q, %v; want the shell to close the connection", l, err)
	}
}

func (c *conn) send(line string) {
	c.t.Helper()
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		c.t.Fatal(err)
	}
}

// peerPID is the SO_PEERCRED pid of the connection.
func (c *conn) peerPID() int {
	c.t.Helper()
	raw, err := c.c.SyscallConn()
	if err != nil {
		c.t.Fatal(err)
	}
	var cred *unix.Ucred
	var cerr error
	raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cerr != nil {
		c.t.Fatal(cerr)
	}
	return int(cred.Pid)
}

// testToken is a fresh token per file; the tests look for it on screen.
func testToken(t *testing.T) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// setupFile renders and creates a setup file for the shell's pane.
func (b *broker) setupFile(pane, token string) string {
	b.t.Helper()
	content, err := Render(Params{Socket: b.sock, Helper: b.helper, Token: token, Pane: pane})
	if err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(b.dir, "setup "+strings.TrimPrefix(pane, "%")+"-"+token[:6]+".zsh")
	f, err := Create(path, content)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { f.Remove() })
	return path
}

// hello is a parsed HELLO line.
type hello struct {
	version, token, pid, pane, tmux string
}

func parseHello(t *testing.T, line string) hello {
	t.Helper()
	f := strings.SplitN(line, " ", 6)
	if len(f) != 6 || f[0] != "HELLO" {
		t.Fatalf("first line %q is not HELLO with 5 fields", line)
	}
	return hello{f[1], f[2], f[3], f[4], f[5]}
}

// source types `source FILE` in the pane and reads the HELLO.
func (s *sh) source(b *broker, file string) (*conn, hello) {
	s.t.Helper()
	s.must("send-keys", "-t", s.pane, "-l", "source "+quote(file))
	s.must("send-keys", "-t", s.pane, "Enter")
	c := b.accept()
	return c, parseHello(s.t, c.line())
}

// enroll sources a fresh setup file, answers OK and waits for the message. The shell closes
// the HELLO connection once answered; the returned connection is the one its next prompt
// attached.
func (s *sh) enroll(b *broker, eid string) (*conn, hello) {
	s.t.Helper()
	token := testToken(s.t)
	before := promptLines(s.lines())
	c, h := s.source(b, b.setupFile(s.pane, token))
	if h.token != token {
		s.t.Fatalf("HELLO token %q; want %q", h.token, token)
	}
	b.liveFIFO(eid)
	c.send("OK " + eid)
	want := "tmux_run enrolled in pane " + s.pane + "; run libtmux_mcp_unenroll to stop"
	l := s.waitPrompt(before)
	if !slices.Contains(l, want) {
		s.t.Fatalf("no %q; the pane shows:\n%s", want, strings.Join(l, "\n"))
	}
	c.eof()
	return b.reattach(eid), h
}

// helperConn accepts the SPAWN connection and reads what the helper wrote.
// It returns the connection and the helper's pid.
func (b *broker) helperConn(eid, runID string, shellPID int) (*conn, int) {
	b.t.Helper()
	sc := b.accept()
	sc.expect("SPAWN " + eid + " " + runID)
	if got := sc.peerPID(); got != shellPID {
		b.t.Errorf("SPAWN connection's SO_PEERCRED pid %d; want the shell's %d", got, shellPID)
	}
	f := strings.Fields(sc.line())
	if len(f) != 8 || f[0] != "helper" || f[1] != "serve" {
		b.t.Fatalf("helper wrote %q; want helper serve and its state", f)
	}
	if got := strings.Join(f[3:], " "); got != "/dev/null /dev/null /dev/null 1 0" {
		b.t.Errorf("helper's fds 0-2, socket and FIFO counts: %s; want /dev/null thrice, one socket (fd 3) and no liveness FIFO: the prompt fd, the shell's copy or the FIFO leaked", got)
	}
	pid, _ := strconv.Atoi(f[2])
	return sc, pid
}

// liveFIFO makes the liveness FIFO the broker makes for enrollment eid before it answers OK,
// and holds its read end open for the rest of the test.
func (b *broker) liveFIFO(eid string) string {
	b.t.Helper()
	path := filepath.Join(b.dir, "live-"+eid)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := unix.Mkfifo(path, 0o600); err != nil {
		b.t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { unix.Close(fd) })
	return path
}

// reattach accepts the connection the shell opens for its next prompt (precmd) and checks that
// it says ATTACH.
func (b *broker) reattach(eid string) *conn {
	b.t.Helper()
	c := b.accept()
	c.expect("ATTACH " + eid)
	return c
}

// expectGo accepts the STATE connection of run id of enrollment eid, checks that the shell's
// own process opened it (SO_PEERCRED) and closed it after the state, then reads the GO on the
// prompt's connection c. It returns the directory and environment the state carries.
func (b *broker) expectGo(c *conn, eid, id string, shellPID int) (dir string, env map[string]string) {
	b.t.Helper()
	st := b.accept()
	f := strings.Fields(st.line())
	if len(f) != 4 || f[0] != "STATE" || f[1] != eid || f[2] != id {
		b.t.Fatalf("the state connection said %q; want STATE %s %s <n>", f, eid, id)
	}
	if got := st.peerPID(); got != shellPID {
		b.t.Errorf("STATE connection's SO_PEERCRED pid %d; want the shell's %d", got, shellPID)
	}
	n, err := strconv.Atoi(f[3])
	if err != nil {
		b.t.Fatal(err)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(st.r, payload); err != nil {
		b.t.Fatalf("STATE payload of %d bytes: %v", n, err)
	}
	st.eof()
	c.expect("GO " + id)
	parts := strings.Split(string(payload), "\x00")
	env = map[string]string{}
	for _, kv := range parts[1:] {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return parts[0], env
}

// pipeTerminal records every byte the pane's programs write to the terminal
// from now on, into a file. stop ends the recording after a marker byte
// typed through the pane proves everything written earlier has arrived; it
// returns what was recorded before the marker.
func (s *sh) pipeTerminal() (stop func() string) {
	s.t.Helper()
	out := filepath.Join(s.dir, "terminal-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	s.must("pipe-pane", "-o", "-t", s.pane, "cat >"+quote(out))
	return func() string {
		s.t.Helper()
		s.must("send-keys", "-t", s.pane, "-l", "Z")
		var b []byte
		tmuxtest.Eventually(s.t, waitLong, "the marker reaching the terminal", func() bool {
			var err error
			if b, err = os.ReadFile(out); err != nil && !os.IsNotExist(err) {
				s.t.Fatal(err)
			}
			return bytes.HasSuffix(b, []byte("Z"))
		}, func() string { return fmt.Sprintf("recorded %q", b) })
		s.must("pipe-pane", "-t", s.pane)
		s.keys("BSpace")
		s.waitFor("the marker to be erased", func(l []string) bool { return !strings.HasSuffix(l[len(l)-1], "Z") })
		// The prompt's connection attaches from zle-line-init, before the editor turns on
		// bracketed paste for the new line: that sequence can trail the attach into the
		// recording. It is the editor's, not the run's.
		b = bytes.TrimPrefix(b, []byte("\x1b[?2004h"))
		return string(bytes.TrimSuffix(b, []byte("Z")))
	}
}

// ppid reads the parent pid of pid.
func ppid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, _ := strconv.Atoi(f[1])
	return n
}

// hasSocketFD reports whether pid holds any socket.
func hasSocketFD(t *testing.T, pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if target, _ := os.Readlink(dir + "/" + e.Name()); strings.HasPrefix(target, "socket:") {
			return true
		}
	}
	return false
}

// childPID returns the one child of pid.
func childPID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	f := strings.Fields(string(b))
	if err != nil || len(f) != 1 {
		t.Fatalf("children of %d: %q, %v; want one", pid, b, err)
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// fdTargets lists where the open descriptors of pid lead.
func fdTargets(t *testing.T, pid int) []string {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		target, _ := os.Readlink(dir + "/" + e.Name())
		out = append(out, e.Name()+" -> "+target)
	}
	return out
}
