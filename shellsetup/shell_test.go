//go:build linux

package shellsetup

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

const eid = "e0_enrollment-ID"

func runID(n int) string { return strings.Repeat(strconv.Itoa(n%10), 32) }

// 1. HELLO carries the token, the pane's own pid, the pane and $TMUX; OK
// prints exactly one line, and the token never reaches the terminal.
func TestEnrollSendsHello(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, h := s.enroll(b, eid)
	if h.version != "1" {
		t.Errorf("HELLO version %q; want 1", h.version)
	}
	if h.pid != strconv.Itoa(s.pid) {
		t.Errorf("HELLO pid %s; want #{pane_pid} %d", h.pid, s.pid)
	}
	if got := c.peerPID(); got != s.pid {
		t.Errorf("SO_PEERCRED pid %d; want #{pane_pid} %d", got, s.pid)
	}
	if h.pane != s.pane {
		t.Errorf("HELLO pane %q; want %q", h.pane, s.pane)
	}
	info := s.paneFormat("#{socket_path},#{pid},#{session_id}")
	if want := strings.Replace(info, ",$", ",", 1); h.tmux != want {
		t.Errorf("HELLO $TMUX %q; want %q", h.tmux, want)
	}
	screen := s.screen()
	if n := strings.Count(screen, "tmux_run enrolled in pane "); n != 1 {
		t.Errorf("the enrolled line appears %d times; want once:\n%s", n, screen)
	}
	if strings.Contains(screen, h.token) {
		t.Errorf("the token is on the screen:\n%s", screen)
	}
	// Everything after the typed source line is the one message.
	l := s.lines()
	if got := l[len(l)-2]; got != "tmux_run enrolled in pane "+s.pane+"; run libtmux_mcp_unenroll to stop" || !strings.HasPrefix(l[len(l)-3], "% source ") {
		t.Errorf("the pane shows more than the enrolled line:\n%s", strings.Join(l, "\n"))
	}
	c.quiet(quietFor / 5)
	// A command closes the prompt connection first (so it cannot inherit it); the liveness fd
	// stays, close-on-exec; the next prompt attaches a new connection on an fd >= 10.
	out := s.typeLine(`echo "rc=$? fd=${_libtmux_mcp_fd-none} live=${_libtmux_mcp_live:+set}"; readlink /proc/$$/fd/$_libtmux_mcp_live`)
	c.eof()
	if want := []string{"rc=0 fd=none live=set", b.liveFIFO(eid)}; strings.Join(out, "|") != strings.Join(want, "|") {
		t.Errorf("during a command: %q; want %q: rc=0, no prompt fd, the liveness FIFO open", out, want)
	}
	c2 := b.reattach(eid)
	if !hasSocketFD(t, s.pid) {
		t.Errorf("the shell holds no socket after the prompt came back: %q", fdTargets(t, s.pid))
	}
	c2.quiet(quietFor / 5)
}

// 2. RUN at an idle prompt: STARTED, then SPAWN on a second connection that
// the helper owns as fd 3; nothing reaches the terminal; $?, $!, the job
// table and the history are untouched.
func TestRunWhenIdle(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)

	// $! from a finished background job, then $? = 1.
	out := s.typeLine("sleep 0 &")
	c.eof()
	c = b.reattach(eid)
	if len(out) == 0 || !strings.HasPrefix(out[0], "[1] ") {
		t.Fatalf("sleep 0 & printed %q", out)
	}
	bang := strings.TrimPrefix(out[0], "[1] ")
	s.waitFor("the job's done notice", func(l []string) bool {
		for _, x := range l {
			if strings.HasPrefix(x, "[1]") && strings.Contains(x, "done") && strings.HasSuffix(x, "sleep 0") {
				return l[len(l)-1] == "%"
			}
		}
		return false
	})
	s.typeLine("false")
	c.eof()
	c = b.reattach(eid)
	hist, err := os.ReadFile(s.hist)
	if err != nil || !strings.Contains(string(hist), "false\n") {
		t.Fatalf("history file %q (%v); want the commands so far", hist, err)
	}
	before := s.screen("-e")

	stop := s.pipeTerminal()
	id := runID(1)
	c.send("HELPER " + id)
	sc, hpid := b.helperConn(eid, id, s.pid)
	dir, env := b.expectGo(c, eid, id, s.pid)
	if want := s.paneFormat("#{pane_current_path}"); dir != want {
		t.Errorf("STATE directory %q; want %q", dir, want)
	}
	if env["HISTFILE"] != "" || env["PATH"] != os.Getenv("PATH") || env["LANG"] != "C.UTF-8" {
		t.Errorf("STATE environment: HISTFILE %q (not exported), PATH %q, LANG %q; want only exported variables", env["HISTFILE"], env["PATH"], env["LANG"])
	}
	// A plain RUN needs no helper: just GO.
	c.send("RUN " + runID(2))
	b.expectGo(c, eid, runID(2), s.pid)
	if written := stop(); written != "" {
		t.Errorf("the run wrote %q to the terminal; want nothing", written)
	}
	if after := s.screen("-e"); after != before {
		t.Errorf("the pane changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if h2, _ := os.ReadFile(s.hist); string(h2) != string(hist) {
		t.Errorf("the history file changed:\n%q\n%q", hist, h2)
	}

	// The helper is not the shell's child: a double fork. (helperConn
	// checked its descriptors.)
	if p := ppid(t, hpid); p == s.pid {
		t.Errorf("the helper's parent is the shell; want it reparented by a double fork")
	}
	sc.c.Close() // the fake helper ends on EOF

	// (`$!"` would be zsh's history-expansion stop `!"`: keep a space after $!.)
	out = s.typeLine(`echo st=$? bang=$! ; jobs; echo end-of-check`)
	if want := []string{"st=1 bang=" + bang, "end-of-check"}; strings.Join(out, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the run the shell printed %q; want %q ($?, $! kept, no jobs)", out, want)
	}
	c.eof()
	b.reattach(eid)
}

// 3. Typed but unsubmitted text: BUSY, and the text stays. Cleared and
// Enter: READY, once.
func TestBusyWhileTyping(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	s.typeText("echo hi")
	id := runID(3)
	c.send("RUN " + id)
	c.expect("BUSY " + id)
	b.noConnection()
	if l := s.lines(); l[len(l)-1] != "% echo hi" {
		t.Errorf("the typed line changed: %q", l[len(l)-1])
	}
	s.keys("C-u")
	s.waitFor("an empty line", func(l []string) bool { return l[len(l)-1] == "%" })
	c.quiet(quietFor / 5) // clearing the line is not a fresh prompt
	before := promptLines(s.lines())
	s.keys("Enter") // an empty line runs nothing: the connection stays
	s.waitPrompt(before)
	c.quiet(quietFor / 5)

	// And a run now starts.
	id = runID(4)
	c.send("HELPER " + id)
	b.helperConn(eid, id, s.pid)
	b.expectGo(c, eid, id, s.pid)
}

// 4. A PS2 continuation line is busy; once the command runs, the connection closes, and the next
// prompt attaches a new one.
func TestBusyAtContinuation(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	s.must("send-keys", "-t", s.pane, "-l", `echo "`)
	s.keys("Enter")
	s.waitFor("the continuation prompt", func(l []string) bool { return strings.HasPrefix(l[len(l)-1], "dquote>") })
	id := runID(5)
	c.send("RUN " + id)
	c.expect("BUSY " + id)
	b.noConnection()
	before := promptLines(s.lines())
	s.must("send-keys", "-t", s.pane, "-l", `"`)
	s.keys("Enter")
	s.waitPrompt(before)
	c.eof()
	b.reattach(eid)
}

// 5. A foreground command never holds the connection: preexec closes it before the command
// starts (so the broker knows at once that the shell is not at its prompt, and the command
// inherits neither the connection nor the liveness fd), and precmd attaches a new one once the
// prompt is back.
func TestNoConnectionDuringForegroundCommand(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	before := promptLines(s.lines())
	s.must("send-keys", "-t", s.pane, "-l", "sleep 5")
	s.keys("Enter")
	c.eof()
	s.waitFor("sleep in the foreground", func([]string) bool { return s.paneFormat("#{pane_current_command}") == "sleep" })
	sleep := childPID(t, s.pid)
	if extra := tmuxtest.ExtraFDs(t, sleep, 2*time.Second); len(extra) != 0 {
		t.Errorf("the sleep started at the enrolled prompt holds %q; want only fds 0-2", extra)
	}
	b.noConnection()
	s.waitPrompt(before)
	b.reattach(eid)
}

// 6. NO: the refusal is printed, sourcing returns 1, and the same file can
// be sourced again.
func TestRefusedThenSourcedAgain(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	token := testToken(t)
	file := b.setupFile(s.pane, token)
	before := promptLines(s.lines())
	c, h := s.source(b, file)
	if h.token != token {
		t.Fatalf("token %q; want %q", h.token, token)
	}
	c.send("NO wrong-pane")
	c.eof()
	l := s.waitPrompt(before)
	if got := l[len(l)-2]; got != "tmux_run enrollment refused: wrong-pane" {
		t.Errorf("refusal line %q", got)
	}
	if out := s.typeLine(`echo "rc=$? enrolled=${+functions[libtmux_mcp_unenroll]} fd=${_libtmux_mcp_fd-none}"`); len(out) != 1 || out[0] != "rc=1 enrolled=0 fd=none" {
		t.Errorf("after NO: %q; want rc=1, no unenroll function, no fd", out)
	}
	c2, h2 := s.source(b, file)
	if h2.token != token {
		t.Errorf("second HELLO token %q; want %q", h2.token, token)
	}
	c2.send("OK " + eid)
	s.waitFor("the enrolled line", func(l []string) bool {
		return slices.Contains(l, "tmux_run enrolled in pane "+s.pane+"; run libtmux_mcp_unenroll to stop")
	})
	if strings.Contains(s.screen(), token) {
		t.Error("the token is on the screen")
	}
}

// Garbled and missing answers to HELLO.
func TestHelloAnswers(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	for _, tc := range []struct{ answer, want string }{
		{"ERR bad-request", "tmux_run enrollment failed: unexpected answer from libtmux-mcp"},
		{"NO two words", "tmux_run enrollment failed: unexpected answer from libtmux-mcp"},
		{"NO \x1b[2J", "tmux_run enrollment failed: unexpected answer from libtmux-mcp"},
		{"OK " + strings.Repeat("x", 65), "tmux_run enrollment failed: unexpected answer from libtmux-mcp"},
		{"OK", "tmux_run enrollment failed: unexpected answer from libtmux-mcp"}, // then a half-close
		{"(eof)", "tmux_run enrollment failed: libtmux-mcp closed the connection without answering"},
		{"(nothing)", "tmux_run enrollment failed: no answer from libtmux-mcp within 5 s"},
	} {
		before := promptLines(s.lines())
		c, _ := s.source(b, b.setupFile(s.pane, testToken(t)))
		began := time.Now()
		switch tc.answer {
		case "OK":
			c.c.Write([]byte("OK")) // no newline
			c.c.CloseWrite()
		case "(eof)":
			c.c.CloseWrite()
		case "(nothing)":
		default:
			c.send(tc.answer)
		}
		l := s.waitPrompt(before)
		if got := l[len(l)-2]; got != tc.want {
			t.Errorf("answer %q: the pane shows %q; want %q", tc.answer, got, tc.want)
		}
		if d := time.Since(began); tc.answer == "(nothing)" && d < 4*time.Second {
			t.Errorf("gave up after %v; want 5 s", d)
		}
		c.eof()
	}
}

// 7. A nested zsh reports its own pid, which is not #{pane_pid}.
func TestNestedShellReportsItsOwnPid(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	before := promptLines(s.lines())
	s.must("send-keys", "-t", s.pane, "-l", "zsh")
	s.keys("Enter")
	s.waitPrompt(before)
	c, h := s.source(b, b.setupFile(s.pane, testToken(t)))
	pid, _ := strconv.Atoi(h.pid)
	if pid == s.pid || pid != c.peerPID() {
		t.Errorf("HELLO pid %d, SO_PEERCRED pid %d, pane_pid %d; want the nested shell's own pid", pid, c.peerPID(), s.pid)
	}
	if got := ppid(t, pid); got != s.pid {
		t.Errorf("the nested shell's parent is %d; want the pane's zsh %d", got, s.pid)
	}
	c.send("NO not-pane-process")
	s.waitFor("the refusal", func(l []string) bool { return slices.Contains(l, "tmux_run enrollment refused: not-pane-process") })
}

// 8. libtmux_mcp_unenroll says BYE, closes the connection and says so.
func TestUnenroll(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	out := s.typeLine("libtmux_mcp_unenroll")
	if want := "tmux_run unenrolled in pane " + s.pane; len(out) != 1 || out[0] != want {
		t.Errorf("unenroll printed %q; want %q", out, want)
	}
	c.eof()
	bye := b.accept()
	bye.expect("BYE " + eid)
	bye.c.Close() // as the broker does once it has let go
	if out := s.typeLine(`echo "${_libtmux_mcp_fd-none} ${_libtmux_mcp_live-none} ${precmd_functions[(I)_libtmux_mcp_precmd]} ${preexec_functions[(I)_libtmux_mcp_preexec]}"`); len(out) != 1 || out[0] != "none none 0 0" {
		t.Errorf("state after unenroll: %q; want no fds and no hooks", out)
	}
	b.noConnection()
	if out := s.typeLine("libtmux_mcp_unenroll; echo rc=$?"); strings.Join(out, "|") != "tmux_run is not enrolled in this shell|rc=1" {
		t.Errorf("second unenroll: %q", out)
	}
	// A fresh file enrolls again.
	s.enroll(b, eid)
}

// The broker hanging up: the shell forgets the enrollment without a word,
// and a fresh file enrolls again.
func TestBrokerHangupStopsQuietly(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	stop := s.pipeTerminal()
	c.c.Close()
	s.waitFor("the shell to close its connection", func([]string) bool { return !hasSocketFD(t, s.pid) })
	if written := stop(); written != "" {
		t.Errorf("the hangup wrote %q to the terminal; want nothing", written)
	}
	if out := s.typeLine(`echo "${_libtmux_mcp_fd-none} ${precmd_functions[(I)_libtmux_mcp_precmd]}"`); len(out) != 1 || out[0] != "none 0" {
		t.Errorf("state after hangup: %q; want no fd and no precmd hook", out)
	}
	s.enroll(b, eid)
}

// Sourcing a second file in an enrolled shell is refused without
// connecting.
func TestSourcedTwiceRefuses(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	token := testToken(t)
	out := s.typeLine("source " + quote(b.setupFile(s.pane, token)) + "; echo rc=$?")
	if strings.Join(out, "|") != "tmux_run enrollment: this shell is already enrolled; run libtmux_mcp_unenroll first|rc=1" {
		t.Errorf("second source printed %q", out)
	}
	c.eof()
	c = b.reattach(eid) // the only connection: the refused source made none
	// The first enrollment still works.
	id := runID(7)
	c.send("HELPER " + id)
	b.helperConn(eid, id, s.pid)
	b.expectGo(c, eid, id, s.pid)
}

// Malformed requests get ERR bad-request and change nothing; with the
// broker socket gone a run answers FAIL connect.
func TestBadRequestsAndUnreachableBroker(t *testing.T) {
	t.Parallel()
	s := newShell(t, "")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	stop := s.pipeTerminal()
	for _, bad := range []string{
		"RUN",
		"RUN " + strings.Repeat("A", 32),  // uppercase
		"RUN " + strings.Repeat("a", 31),  // short
		"RUN " + strings.Repeat("a", 33),  // long
		"RUN  " + strings.Repeat("a", 32), // two spaces
		"RUN " + strings.Repeat("a", 32) + " x",
		"HELLO",
		"HELPER",
		"HELPER " + strings.Repeat("a", 32) + " x",
		"GO " + strings.Repeat("a", 32),
		"run " + strings.Repeat("a", 32),
		"",
	} {
		c.send(bad)
		c.expect("ERR bad-request")
	}
	// Two requests in one write are both served, in order.
	c.send("HELPER " + runID(8) + "\nRUN")
	b.helperConn(eid, runID(8), s.pid)
	b.expectGo(c, eid, runID(8), s.pid)
	c.expect("ERR bad-request")
	if written := stop(); written != "" {
		t.Errorf("wrote %q to the terminal; want nothing", written)
	}

	os.Remove(b.sock)
	id := runID(9)
	c.send("HELPER " + id)
	c.expect("FAIL " + id + " connect")
	c.quiet(quietFor / 5)
}

// A shell set up to break naive setup files: echoing and tracing options,
// aliases and functions that shadow the builtins the file uses, and options
// that change parsing and expansion. The token stays off the screen, the
// options come back, and runs still work.
func TestHostileShellSettings(t *testing.T) {
	t.Parallel()
	rc := strings.Join([]string{
		`setopt ksh_arrays sh_word_split rc_quotes ignore_close_braces no_multios err_return no_unset print_exit_value warn_create_global`,
		`precmd() { : }`,
		`sysread() { echo LEAK; }; syswrite() { echo LEAK; }; zsocket() { echo LEAK; }`,
		`alias print='print LEAK' read='read LEAK' zle='zle LEAK' exec='exec LEAK' builtin='builtin LEAK' emulate='emulate LEAK' setopt='setopt LEAK' unset='unset LEAK'`,
		`alias -g TMUX=LEAK`,
	}, "\n") + "\n"
	s := newShell(t, rc)
	b := newBroker(t)
	before := promptLines(s.lines())
	s.must("send-keys", "-t", s.pane, "-l", `\setopt xtrace verbose`)
	s.keys("Enter")
	s.waitPrompt(before)
	c, h := s.enroll(b, eid)
	screen := s.screen()
	if strings.Contains(screen, h.token) || strings.Contains(screen, "LEAK") {
		t.Errorf("the token or a shadowed builtin reached the screen:\n%s", screen)
	}
	// The options the file turned off while it was read are back on.
	out := s.typeLine(`print -r -- "${options[xtrace]} ${options[verbose]} ${options[aliases]} ${options[rcquotes]} ${options[ignoreclosebraces]}"`)
	if !slices.Contains(out, "on on on on on") {
		t.Errorf("options after sourcing: %q; want all on", out)
	}
	c.eof()
	c = b.reattach(eid)
	before = promptLines(s.lines())
	s.must("send-keys", "-t", s.pane, "-l", `\unsetopt xtrace verbose`)
	s.keys("Enter")
	s.waitPrompt(before)
	c.eof()
	c = b.reattach(eid)
	stop := s.pipeTerminal()
	id := runID(2)
	c.send("HELPER " + id)
	b.helperConn(eid, id, s.pid)
	b.expectGo(c, eid, id, s.pid)
	if written := stop(); written != "" {
		t.Errorf("the run wrote %q to the terminal", written)
	}
}

// More editor states that are not an idle, empty prompt: each answers BUSY
// and leaves the state alone. (vared runs as a command: the connection is
// closed while it edits, and the next prompt attaches a new one.)
func TestBusyEditorStates(t *testing.T) {
	t.Parallel()
	s := newShell(t, "bindkey -e\n")
	b := newBroker(t)
	c, _ := s.enroll(b, eid)
	for i, tc := range []struct {
		why     string
		enter   func()            // puts the editor in the state
		shows   func(string) bool // the last line while in it
		finish  []string          // keys that end with a fresh prompt
		command bool              // the state is a command's: no connection while in it
	}{
		{"incremental search", func() { s.keys("C-r") }, func(l string) bool { return strings.Contains(l, "i-search") }, []string{"C-g", "Enter"}, false},
		{"vared", func() { s.must("send-keys", "-t", s.pane, "-l", "x=; vared -p 'edit> ' x"); s.keys("Enter") },
			func(l string) bool { return l == "edit>" }, []string{"Enter"}, true},
		// zsh shows nothing for a pending numeric argument: the run waits
		// until zsh has read the key's two bytes (ESC 3), and typing x
		// afterwards proves the argument survived.
		{"a numeric argument", func() { s.keysRead(2, "M-3") }, nil, []string{"x"}, false},
	} {
		before := promptLines(s.lines())
		tc.enter()
		if tc.shows != nil {
			s.waitFor(tc.why, func(l []string) bool { return tc.shows(l[len(l)-1]) })
		}
		if tc.command {
			c.eof()
			b.noConnection()
		} else {
			id := runID(i)
			c.send("RUN " + id)
			c.expect("BUSY " + id)
		}
		if l := s.lines(); tc.shows != nil && !tc.shows(l[len(l)-1]) {
			t.Errorf("%s: the state ended: %q", tc.why, l[len(l)-1])
		}
		s.keys(tc.finish...)
		if tc.shows == nil {
			s.waitFor("the argument to repeat x", func(l []string) bool { return l[len(l)-1] == "% xxx" })
			s.keys("C-u", "Enter")
		}
		s.waitPrompt(before)
		if tc.command {
			c = b.reattach(eid)
		}
	}
	c.quiet(quietFor / 5)
}
