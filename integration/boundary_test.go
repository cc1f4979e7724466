package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// A tmux server this process starts gets none of its secrets: the HTTP token is neither in
// tmux's global environment (show-environment -g) nor in the environment of a pane's process,
// which is what a script run there inherits (issue 17, finding 7).
func TestStartedTmuxServerGetsNoSecrets(t *testing.T) {
	t.Parallel()
	tmuxServer(t) // skips without tmux
	const token = "secret-token-0123456789abcdef"
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "s")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	p := start(t, cleanEnv(t, dir, "LIBTMUX_MCP_HTTP_TOKEN="+token, "KEEP_ME=visible"), "--socket", sock)
	if line := p.startupLine(); !strings.Contains(line, "serving new") {
		t.Fatalf("startup line %q; want this process to start the tmux server", line)
	}
	obj, _ := p.answer("create_session", map[string]any{"sessionName": "env"})
	pane := obj["paneId"].(string)
	global, err := exec.Command("tmux", "-S", sock, "show-environment", "-g").CombinedOutput()
	if err != nil {
		t.Fatalf("show-environment -g: %v\n%s", err, global)
	}
	if strings.Contains(string(global), token) || strings.Contains(string(global), "LIBTMUX_MCP_HTTP_TOKEN") {
		t.Errorf("tmux's global environment holds the HTTP token:\n%s", global)
	}
	if !strings.Contains(string(global), "KEEP_ME=visible") {
		t.Errorf("tmux's global environment lost an ordinary variable:\n%s", global)
	}
	info, _ := p.answer("get_pane_info", map[string]any{"paneId": pane})
	pid := int(info["pane"].(map[string]any)["pid"].(float64))
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), token) {
		t.Errorf("the pane's process (%d) has the HTTP token in its environment", pid)
	}
}

// forgeFunction defines, in the person's zsh, a function that starts a background subshell
// which takes whatever broker connection the shell has open at that moment: it writes the fd it
// found (or "none") to mark.ran, creates mark.fd when it has one, and then answers every request
// on it with a forged GO (cwd /tmp, FORGED=yes-from-child), after creating mark. It is what
// issue 17's finding 2 did by hand.
func forgeFunction(mark string) string {
	return `forge() { { zmodload zsh/system; fd=$_libtmux_mcp_fd; print -r -- ${fd:-none} > ` + mark + `.$sysparams[pid] && mv ` + mark + `.$sysparams[pid] ` + mark + `.ran; ` +
		`[[ -n $fd ]] || exit; : > ` + mark + `.fd; while sysread -i $fd -s 4096 buf; do : > ` + mark +
		`; id=${${${buf#* }%%$'\n'*}}; p=/tmp$'\0'FORGED=yes-from-child; syswrite -o $fd "GO $id ${#p}"$'\n'"$p"; done } </dev/null >/dev/null 2>&1 &! }`
}

// A background job started on the line that sources the setup file inherits nothing it could
// answer with, and while the person's foreground command runs no run is offered to anyone: the
// call answers not_at_prompt at once (issue 17, finding 2: `source FILE; sleep 1000 &`, then a
// foreground `sleep 20`, and a forged GO ran the script).
func TestTmuxRunForgedAnswerFromInheritedDescriptor(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(shortTempDir(t), "forger-read")
	e := invitePane(t, nil, forgeFunction(mark))
	marks := strings.Count(e.p.stderr.String(), "tmux_run pane enrolled")
	e.ts.Type(e.pane, "source "+e.file+"; forge", true)
	if !e.p.stderr.waitCount("tmux_run pane enrolled", marks+1, 20*time.Second) {
		t.Fatalf("the pane did not enroll; it shows:\n%s\nserver stderr:\n%s", e.ts.Capture(e.pane), e.p.stderr)
	}
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.HasSuffix(strings.TrimSpace(s), "%") })
	e.ts.Type(e.pane, "sleep 30", true)
	e.ts.WaitCommand(e.pane, "sleep")
	t.Cleanup(func() { e.ts.Run("send-keys", "-t", e.pane, "C-c") })
	obj := e.run(t, context.Background(), map[string]any{"script": `printf %s "${FORGED-none}"`})
	errorOf(t, obj, "not_at_prompt", "not_sent")
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("the background job read a request on an inherited broker connection")
	}
}

// A command substitution in the prompt (prompt_subst) runs before the prompt's connection is
// attached, so it inherits nothing. A prompt redrawn while the connection is attached (zle
// reset-prompt, here every second from TRAPALRM) does hand it to the substitution's background
// subshell; while the shell waits in the read builtin (no foreground job, so only the writer of
// the answer can tell), that subshell reads RUN and answers a forged GO. The broker sees that the
// answer was not written by the enrolled shell, drops the connection, and nothing runs (issue 17,
// finding 2).
func TestTmuxRunForgedAnswerFromPromptSubstitution(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the broker telling the enrolled shell's answer from a forged one")
	t.Parallel()
	e := enrollPane(t)
	e.stdoutOf(t, "true")                            // the resident helper exists: a GO alone would start a run
	mark := filepath.Join(shortTempDir(t), "forger") // forgers may write after the test
	e.typeAndWait(t, forgeFunction(mark))
	e.typeAndWait(t, `setopt prompt_subst; PS1='$(forge)%% '`)
	tmuxtest.WaitFile(t, mark+".ran")
	if b, _ := os.ReadFile(mark + ".ran"); strings.TrimSpace(string(b)) != "none" {
		t.Errorf("a command substitution in the prompt found broker connection fd %s; want none (the connection attaches after the prompt is drawn)", b)
	}
	e.typeAndWait(t, `TMOUT=1; TRAPALRM() { zle reset-prompt }`)
	// a redrawn prompt's forger holds the attached connection
	tmuxtest.WaitFile(t, mark+".fd", func() string {
		return fmt.Sprintf("the pane shows:\n%s\nserver stderr:\n%s", e.ts.Capture(e.pane), e.p.stderr)
	})
	e.leavePromptForRead(t)
	obj := e.run(t, context.Background(), map[string]any{"script": `printf %s "${FORGED-none}"`})
	if obj["ok"] == true {
		t.Fatalf("a forged answer ran the script: %v", obj["data"])
	}
	errorOf(t, obj, "not_at_prompt", "not_sent")
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the forger never read the request (%v): the test did not exercise the forged answer", err)
	} else if _, ok := e.p.stderr.line("not the enrolled shell", 10*time.Second); !ok {
		t.Errorf("the forged answer was not logged as such; stderr:\n%s", e.p.stderr)
	}
}

// leavePromptForRead types `read x` in the enrolled pane and waits until the shell has closed
// its own copy of the prompt's connection (preexec): it waits in the read builtin, with no
// foreground job, so only the writer of an answer tells the shell from a process holding the
// connection. C-c ends the read when the test ends.
func (e *enrolled) leavePromptForRead(t *testing.T) {
	t.Helper()
	e.ts.Type(e.pane, "read x", true)
	sh := shellPID(t, e)
	tmuxtest.Eventually(t, 10*time.Second, "the shell closing its socket after read x was typed", func() bool { return !holdsSocket(sh) },
		func() string { return "the pane shows:\n" + e.ts.Capture(e.pane) })
	t.Cleanup(func() { e.ts.Run("send-keys", "-t", e.pane, "C-c") })
}

// When the helper is SIGKILLed during a run, the broker stops the script's process group itself
// (it knows it from the started record): the sleep is gone within 2 s of the kill, and the
// answer says the group was stopped (issue 17, finding 4: the script ran on, orphaned).
func TestTmuxRunHelperKilledStopsTheScript(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the broker stopping a script whose helper was killed")
	t.Parallel()
	e := enrollPane(t)
	done, sh, helperPID := e.runUnderHelper(t, "printf ready; sleep 30")
	killed := time.Now()
	if err := syscall.Kill(helperPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	obj := <-done
	e.validate(t, obj)
	er := errorOf(t, obj, "helper_failed", "observed")
	if msg, _ := er["message"].(string); !strings.Contains(msg, "stopped the script's process group "+strconv.Itoa(sh)) {
		t.Errorf("message %q; want it to say the script's process group %d was stopped", msg, sh)
	}
	groupGone(t, sh)
	if d := time.Since(killed); d > 2*time.Second {
		t.Errorf("the script's group outlived its helper by %s; want under 2 s", d)
	}
}

// --enroll-pane %N without FILE writes the invitation in a private directory under
// $XDG_RUNTIME_DIR and prints its path; a server killed with SIGKILL leaves its broker
// directory behind, and the next server's startup removes it, while it leaves alone broker
// directories that a live process holds, that it did not make (no lock file), or that belong to
// another user (issue 17, finding 6).
func TestStaleBrokerDirectoryRemovedAtStartup(t *testing.T) {
	t.Parallel()
	b := build(t)
	ts := tmuxServer(t)
	pane := ts.ZshSession("run")
	runtime := shortTempDir(t)
	env := cleanEnv(t, shortTempDir(t), "XDG_RUNTIME_DIR="+runtime, "LIBTMUX_MCP_LOG=info")
	args := []string{"--socket", ts.Socket, "--enable-tool", "tmux_run", "--enroll-pane", pane, "--helper", b.helper}

	first := start(t, env, args...)
	first.startupLine()
	line, ok := first.stderr.line("source ", 30*time.Second)
	if !ok {
		t.Fatalf("no invitation on stderr:\n%s", first.stderr)
	}
	file := strings.TrimSpace(line[strings.LastIndex(line, "source ")+len("source "):])
	dir := filepath.Dir(file)
	if filepath.Dir(dir) != runtime || !strings.HasPrefix(filepath.Base(dir), "libtmux-mcp-broker-") {
		t.Fatalf("invitation %q; want it in a broker directory under $XDG_RUNTIME_DIR %s", file, runtime)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, file: 0o600} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v (%v); want %v", path, fi.Mode(), err, want)
		}
	}

	// Broker directories that must survive the sweep.
	live := filepath.Join(runtime, "libtmux-mcp-broker-live")
	noLock := filepath.Join(runtime, "libtmux-mcp-broker-nolock")
	others := filepath.Join(runtime, "libtmux-mcp-broker-others")
	for _, d := range []string{live, noLock, others} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	held, err := os.OpenFile(filepath.Join(live, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(others, "lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	keep := []string{live, noLock}
	if os.Getuid() == 0 { // only root can give a directory to another user
		if err := os.Chown(others, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, others)
	}

	first.cmd.Process.Kill()
	first.waitExit(20 * time.Second)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the killed server's broker directory is already gone (%v): the test shows nothing", err)
	}
	second := start(t, env, args...)
	second.startupLine()
	if _, ok := second.stderr.line("source ", 30*time.Second); !ok {
		t.Fatalf("no invitation on stderr:\n%s", second.stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the dead server's broker directory %s is still there (%v)", dir, err)
	}
	for _, d := range keep {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed (%v); only a dead process's own directory may be", d, err)
		}
	}
}

// The agent cannot enroll a pane by typing the invitation's `source FILE` into it: send_keys,
// paste_text, send_keys_batch and run_shell_command refuse a pane with a pending invitation, and
// the pane stays invited (issue 17, finding 1: send_keys and paste_text with enter enrolled it).
func TestSelfEnrollmentByInputToolsRefused(t *testing.T) {
	t.Parallel()
	e := invitePane(t, nil)
	line := "source " + e.file
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"send_keys", map[string]any{"paneId": e.pane, "text": line, "enter": true}},
		{"paste_text", map[string]any{"paneId": e.pane, "text": line, "enter": true}},
		{"send_keys_batch", map[string]any{"rows": []any{map[string]any{"paneId": e.pane, "text": line, "enter": true}}}},
		{"run_shell_command", map[string]any{"paneId": e.pane, "command": line, "timeoutMs": 5000}},
	} {
		res := e.p.call(c.tool, c.args)
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, "invitation_pending") || !strings.Contains(text, "only the person may type there") {
			t.Errorf("%s into the invited pane: isError %v, %s; want an invitation_pending refusal", c.tool, res.IsError, text)
		}
		if got := e.state(t); got != "invited" {
			t.Fatalf("after %s the pane is %q; want still invited", c.tool, got)
		}
	}
	if strings.Contains(e.p.stderr.String(), "tmux_run pane enrolled") {
		t.Errorf("the pane was enrolled by the agent's input; stderr:\n%s", e.p.stderr)
	}
	// The person can still enroll it.
	e.source(t)
	if got := e.stdoutOf(t, "echo ok"); got != "ok\n" {
		t.Errorf("stdout %q after the person enrolled the pane", got)
	}
}

// holdsSocket reports whether process pid has a socket open.
// openFiles lists pid's descriptors and what each names, one per line.
func openFiles(pid int) string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range entries {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s -> %s\n", e.Name(), target)
	}
	return b.String()
}

func holdsSocket(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if target, _ := os.Readlink(filepath.Join(dir, e.Name())); strings.HasPrefix(target, "socket:") {
			return true
		}
	}
	return false
}
