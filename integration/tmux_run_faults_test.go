package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readPID reads a pid a script wrote to path (atomically, via rename).
func readPID(t testing.TB, path string) int {
	t.Helper()
	tmuxtest.WaitFile(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %s holds %q", path, b)
	}
	return pid
}

// writePIDScript writes the script's pid to path, then runs rest.
func writePIDScript(path, rest string) string {
	return "echo $$ > " + path + ".tmp && mv " + path + ".tmp " + path + "; " + rest
}

// groupGone waits up to 2 s for process group pgid to have no live member.
func groupGone(t testing.TB, pgid int) {
	t.Helper()
	tmuxtest.Eventually(t, 2*time.Second, fmt.Sprintf("process group %d ending", pgid), func() bool {
		return syscall.Kill(-pgid, 0) != nil || !liveMember(pgid)
	})
}

// liveMember reports whether a non-zombie process is in group pgid
// (orphans can stay zombies for a while before pid 1 reaps them).
func liveMember(pgid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && pid > 0 {
			return true
		}
	}
	return false
}

// runAsyncProgress starts a tmux_run call whose script prints out first, and returns once a
// progress notification counted those bytes: the helper's records arrive in order, so the broker
// then has the started record (a pid file the script writes does not prove it). The channel
// carries the answer.
func (e *enrolled) runAsyncProgress(t testing.TB, script, out string) <-chan map[string]any {
	t.Helper()
	token := "run-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	params := &mcp.CallToolParams{Name: "tmux_run", Arguments: map[string]any{
		"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen},
		"script": script,
	}}
	params.SetProgressToken(token)
	done := make(chan map[string]any, 1)
	go func() {
		var obj map[string]any
		if res, err := e.p.cs.CallTool(context.Background(), params); err == nil {
			raw, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(raw, &obj)
		}
		done <- obj
	}()
	want := "stdout " + strconv.Itoa(len(out)) + " bytes"
	for {
		select {
		case n := <-e.p.progress:
			if n.ProgressToken == token && strings.Contains(n.Message, want) {
				return done
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no progress notification counting the script's %d bytes of output", len(out))
		}
	}
}

// runAsync starts a tmux_run call and returns a channel with its answer.
func (e *enrolled) runAsync(ctx context.Context, script string) <-chan map[string]any {
	done := make(chan map[string]any, 1)
	go func() {
		res, err := e.p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tmux_run", Arguments: map[string]any{
			"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen},
			"script": script,
		}})
		var obj map[string]any
		if err == nil {
			raw, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(raw, &obj)
		}
		done <- obj
	}()
	return done
}

func TestTmuxRunEnrollmentRules(t *testing.T) {
	t.Parallel()
	e := invitePane(t, nil)
	if got := e.state(t); got != "invited" {
		t.Errorf("state before sourcing = %q; want invited", got)
	}
	info, err := os.Lstat(e.file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("setup file %s: %v, mode %v; want 0600", e.file, err, info.Mode())
	}
	content, err := os.ReadFile(e.file)
	if err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(e.ts.Dir, "spare.zsh") // the person keeps a copy
	if err := os.WriteFile(spare, content, 0o600); err != nil {
		t.Fatal(err)
	}

	// A nested zsh is refused, and the token stays valid.
	e.ts.Type(e.pane, "zsh", true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Count(s, "%") >= 2 })
	e.ts.Type(e.pane, "source "+e.file, true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "refused: not-pane-process") })
	e.ts.Type(e.pane, "exit", true)
	e.ts.Type(e.pane, "clear", true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.TrimSpace(s) == "%" })
	e.source(t)

	// The spent token is refused from anywhere, even the pane's own shell's child.
	e.ts.Type(e.pane, "zsh", true)
	e.ts.WaitFor(e.pane, func(s string) bool {
		return strings.Count(s, "\n%") >= 1 && strings.HasSuffix(strings.TrimSpace(s), "%")
	})
	e.ts.Type(e.pane, "source "+spare, true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "refused: used") })
	e.ts.Type(e.pane, "exit", true)
	if got := e.state(t); got != "enrolled" {
		t.Errorf("state after a refused reuse = %q; want enrolled", got)
	}

	// The person can withdraw the pane.
	e.ts.Type(e.pane, "libtmux_mcp_unenroll", true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "tmux_run unenrolled in pane "+e.pane) })
	if _, ok := e.p.stderr.line("reason=unenrolled", 20*time.Second); !ok {
		t.Fatalf("the server did not see the unenrollment; stderr:\n%s", e.p.stderr)
	}
	if got := e.state(t); got != "lost" {
		t.Errorf("state after unenrolling = %q; want lost", got)
	}
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "enrollment_lost", "not_sent")
}

func TestTmuxRunInvitationExpiresAndSIGHUPReinvites(t *testing.T) {
	t.Parallel()
	// Long enough to copy the invitation before it expires, even under -race on a loaded
	// machine (with 1 s the copy once came too late, and sourcing the empty copy said nothing).
	e := invitePane(t, []string{"--enrollment-timeout", "4s"})
	content, err := os.ReadFile(e.file)
	if err != nil || len(content) == 0 {
		t.Fatalf("copy the invitation before it expires: %d bytes, %v", len(content), err)
	}
	spare := filepath.Join(e.ts.Dir, "spare.zsh")
	if err := os.WriteFile(spare, content, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.p.stderr.line("expired", 20*time.Second); !ok {
		t.Fatalf("no expiry notice; stderr:\n%s", e.p.stderr)
	}
	if _, err := os.Stat(e.file); !os.IsNotExist(err) {
		t.Errorf("the expired invitation's file is still there (%v)", err)
	}
	if got := e.state(t); got != "none" {
		t.Errorf("state after expiry = %q; want none", got)
	}
	e.ts.Type(e.pane, "source "+spare, true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "refused: expired") })

	e.p.cmd.Process.Signal(syscall.SIGHUP)
	if _, ok := e.p.stderr.line("invited "+e.pane+" again", 20*time.Second); !ok {
		t.Fatalf("no re-invitation after SIGHUP; stderr:\n%s", e.p.stderr)
	}
	// A fresh lifetime starts now; enroll before it runs out.
	e.source(t)
}

func TestTmuxRunRefusesExistingSetupFile(t *testing.T) {
	t.Parallel()
	b := build(t)
	ts := tmuxServer(t)
	pane := ts.NewSession("x", "sh")
	regular := filepath.Join(ts.Dir, "there.zsh")
	os.WriteFile(regular, []byte("keep me\n"), 0o600)
	link := filepath.Join(ts.Dir, "link.zsh")
	os.Symlink(filepath.Join(ts.Dir, "nowhere"), link)
	for _, path := range []string{regular, link} {
		cmd := exec.Command(b.server, "--socket", ts.Socket, "--enable-tool", "tmux_run", "--enroll-pane", pane+"="+path, "--helper", b.helper)
		cmd.Env = cleanEnv(t, shortTempDir(t))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil || stdout.Len() != 0 || !strings.Contains(stderr.String(), "rm "+path) {
			t.Errorf("%s: err %v, stdout %q, stderr %q; want a refusal naming rm", path, err, stdout.String(), stderr.String())
		}
	}
	if b, _ := os.ReadFile(regular); string(b) != "keep me\n" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if target, err := os.Readlink(link); err != nil || target != filepath.Join(ts.Dir, "nowhere") {
		t.Errorf("the symlink was changed: %q %v", target, err)
	}
	if _, err := os.Lstat(filepath.Join(ts.Dir, "nowhere")); !os.IsNotExist(err) {
		t.Error("something was written through the symlink")
	}
}

func TestTmuxRunRespawnedPane(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	e.ts.Run("respawn-pane", "-k", "-t", e.pane, "env", "ZDOTDIR="+e.ts.ZDOTDIR, "zsh", "-i")
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "%") })
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "process_changed", "not_sent")
}

func TestTmuxRunShellExitsDuringRun(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	began, finish := filepath.Join(e.ts.Dir, "began"), filepath.Join(e.ts.Dir, "finish")
	done := e.runAsync(context.Background(), "touch "+began+"; while [ ! -e "+finish+" ]; do sleep 0.02; done; echo finished")
	tmuxtest.WaitFile(t, began)
	e.ts.Type(e.pane, "exit", true)
	if _, ok := e.p.stderr.line("tmux_run enrollment lost", 20*time.Second); !ok {
		t.Fatalf("the server did not notice the shell exit; stderr:\n%s", e.p.stderr)
	}
	os.WriteFile(finish, nil, 0o600)
	obj := <-done
	e.validate(t, obj)
	d := data(t, obj)
	if c := d["completion"].(map[string]any); c["state"] != "exited" || c["exit_status"] != 0.0 || d["stdout"].(map[string]any)["data"] != "finished\n" {
		t.Errorf("run across the shell's exit = %v", d)
	}
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "enrollment_lost", "not_sent")
	e.p.cmd.Process.Signal(syscall.SIGHUP)
	if _, ok := e.p.stderr.line("invited "+e.pane+" again", 20*time.Second); !ok {
		t.Fatalf("no re-invitation after SIGHUP; stderr:\n%s", e.p.stderr)
	}
}

func TestTmuxRunHelperKilled(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the answer of a run whose helper was killed")
	t.Parallel()
	e := enrollPane(t)
	done, _, helperPID := e.runUnderHelper(t, "printf ready; sleep 60")
	if err := syscall.Kill(helperPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	obj := <-done
	e.validate(t, obj)
	er := errorOf(t, obj, "helper_failed", "observed")
	if eff := er["effects"].(map[string]any); eff["state"] != "unknown" || eff["completion"].(map[string]any)["state"] != "unobserved" || eff["authorization"] == nil {
		t.Errorf("effects = %v; want unknown, unobserved, with the receipt", eff)
	}
}

// TestTmuxRunStdinEOFStopsTheScript closes the server's stdin itself
// while a run is in flight (an MCP client's Close would first wait for its
// own call to finish).
func TestTmuxRunStdinEOFStopsTheScript(t *testing.T) {
	t.Parallel()
	b := build(t)
	ts := tmuxServer(t)
	pane := ts.ZshSession("eof")
	file := filepath.Join(ts.Dir, "enroll.zsh")
	stderr := newSyncBuffer()
	cmd := exec.Command(b.server, "--socket", ts.Socket, "--enable-tool", "tmux_run", "--enroll-pane", pane+"="+file, "--helper", b.helper)
	cmd.Env = cleanEnv(t, shortTempDir(t), "LIBTMUX_MCP_SHELL_ANSWER_MS=4000", "LIBTMUX_MCP_LOG=info")
	cmd.Stderr = stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { io.Copy(io.Discard, stdout); exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	if _, ok := stderr.line("source "+file, 30*time.Second); !ok {
		t.Fatalf("no invitation; stderr:\n%s", stderr)
	}
	ts.Type(pane, "source "+file, true)
	if _, ok := stderr.line("tmux_run pane enrolled", 20*time.Second); !ok {
		t.Fatalf("no enrollment; stderr:\n%s", stderr)
	}
	info, err := ts.Client.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(ts.Dir, "pid")
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
		"name": "tmux_run", "arguments": map[string]any{
			"target": map[string]any{"kind": "pane", "id": pane, "generation": info.Generation},
			"script": writePIDScript(pidfile, "sleep 60"),
		}}})
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		string(call),
	} {
		io.WriteString(stdin, msg+"\n")
	}
	sh := readPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(-sh, syscall.SIGKILL) })
	begin := time.Now()
	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after stdin EOF: %v; want status 0\nstderr:\n%s", err, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the server did not exit within 10 s of stdin EOF with a run in flight; stderr:\n%s", stderr)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("exit took %s; the run should stop at once", d)
	}
	groupGone(t, sh)
}

func TestTmuxRunReportsProgress(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the broker's progress notifications")
	t.Parallel()
	e := enrollPane(t)
	params := &mcp.CallToolParams{Name: "tmux_run", Arguments: map[string]any{
		"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen},
		"script": "printf 12345; sleep 2.5",
	}}
	params.SetProgressToken("run-1")
	res, err := e.p.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("tmux_run: %v %v", err, res)
	}
	select {
	case n := <-e.p.progress:
		if n.ProgressToken != "run-1" || n.Progress <= 0 || !strings.Contains(n.Message, "stdout 5 bytes") {
			t.Errorf("progress notification = %+v", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a 2.5 s run sent no progress notification")
	}
}

func TestTmuxRunBrokerSocketRemoved(t *testing.T) {
	t.Parallel()
	e := invitePane(t, nil)
	content, err := os.ReadFile(e.file)
	if err != nil {
		t.Fatal(err)
	}
	socket := brokerSocket(t, content)
	e.source(t)
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "spawn_failed", "not_sent")
}

func TestTmuxRunEOFRetiresInvitations(t *testing.T) {
	t.Parallel()
	e := invitePane(t, nil)
	content, err := os.ReadFile(e.file)
	if err != nil {
		t.Fatalf("no setup file while invited: %v", err)
	}
	socket := brokerSocket(t, content)
	e.p.close()
	e.p.waitExit(10 * time.Second)
	if code := e.p.exitStatus(); code != 0 {
		t.Errorf("exit status %d; want 0", code)
	}
	if _, err := os.Stat(e.file); !os.IsNotExist(err) {
		t.Errorf("the pending invitation's file survived stdin EOF (%v)", err)
	}
	if _, err := os.Stat(filepath.Dir(socket)); !os.IsNotExist(err) {
		t.Errorf("the broker's directory %s survived stdin EOF (%v)", filepath.Dir(socket), err)
	}
}

// brokerSocket finds the broker socket path a setup file connects to.
func brokerSocket(t testing.TB, content []byte) string {
	t.Helper()
	text := string(content)
	i := strings.Index(text, "/libtmux-mcp-broker-")
	if i < 0 {
		t.Fatalf("no broker socket path in the setup file")
	}
	start := strings.LastIndexByte(text[:i], '\'') + 1
	end := start + strings.IndexByte(text[start:], '\'')
	return text[start:end]
}

func TestTmuxRunTimeout(t *testing.T) {
	t.Parallel()
	e := invitePane(t, []string{"--run-timeout", "1s"})
	e.source(t)
	pidfile := filepath.Join(e.ts.Dir, "pid")
	done := e.runAsync(context.Background(), writePIDScript(pidfile, "sleep 30"))
	sh := readPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(-sh, syscall.SIGKILL) })
	obj := <-done
	e.validate(t, obj)
	er := errorOf(t, obj, "timed_out", "observed")
	if eff := er["effects"].(map[string]any); eff["state"] != "unknown" && eff["state"] != "known" {
		t.Errorf("effects after a timeout = %v", eff)
	}
	groupGone(t, sh)
}

func TestTmuxRunDeadPane(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	e.ts.Run("set-option", "-p", "-t", e.pane, "remain-on-exit", "on")
	e.ts.Type(e.pane, "exit", true)
	tmuxtest.Eventually(t, 20*time.Second, "the pane dying", func() bool {
		return strings.TrimSpace(e.ts.Run("display-message", "-p", "-t", e.pane, "#{pane_dead}")) == "1"
	}, func() string { return "it shows:\n" + e.ts.Capture(e.pane) })
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "pane_dead", "not_sent")
}

// runUnderHelper starts script (which prints "ready" first) as a run and
// waits until it runs; it returns the run's answer channel, the script's
// shell pid (its process group, killed at cleanup) and the helper's pid
// (the shell's parent).
func (e *enrolled) runUnderHelper(t *testing.T, script string) (<-chan map[string]any, int, int) {
	t.Helper()
	pidfile := filepath.Join(e.ts.Dir, "pid")
	done := e.runAsyncProgress(t, writePIDScript(pidfile, script), "ready")
	sh := readPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(-sh, syscall.SIGKILL) })
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(sh) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(stat)
	helperPID, err := strconv.Atoi(strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[1])
	if err != nil {
		t.Fatalf("the script's parent in %q: %v", s, err)
	}
	return done, sh, helperPID
}
