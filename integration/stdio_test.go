package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// optInTools belong to no toolset: only --enable-tool lists them.
var optInTools = []string{"tmux_run", "tmux_run_start"}

// allToolsets selects every toolset explicitly.
const allToolsets = "inspect,manage,execute,teardown"

// exitDeadline is the order of magnitude of a clean exit: a server that
// needs longer is waiting on something it should have stopped.
const exitDeadline = 2 * time.Second

// fixture is a session on a test server whose pane shows "<&>", and a
// second session whose pane runs sh at its prompt (shellPaneID). made
// holds ids that earlier calls created, for later calls (shared by copies).
type fixture struct {
	sessionName, sessionID, windowID, paneID string
	shellPaneID                              string
	made                                     map[string]string
}

// ampSession creates the fixture: a session named with <&>, running a
// program that prints <&> and then waits, and waits for that text.
func ampSession(t *testing.T, ts *tmuxtest.Server) fixture {
	t.Helper()
	f := fixture{sessionName: "amp<&>", made: map[string]string{}}
	f.paneID = ts.NewSession(f.sessionName, "sh", "-c", `printf '%s\n' '<&> ready'; exec cat`)
	ts.WaitFor(f.paneID, func(screen string) bool { return strings.Contains(screen, "<&> ready") })
	ids := strings.Fields(ts.Run("display-message", "-p", "-t", f.paneID, "#{session_id} #{window_id}"))
	if len(ids) != 2 {
		t.Fatalf("display-message for %s answered %q", f.paneID, ids)
	}
	f.sessionID, f.windowID = ids[0], ids[1]
	f.shellPaneID = ts.NewSession("shell", "env", "PS1=$ ", "sh", "-i")
	ts.WaitFor(f.shellPaneID, func(screen string) bool { return strings.HasPrefix(strings.TrimSpace(screen), "$") })
	return f
}

// toolCall is one valid call of a tool and a check of its answer.
type toolCall struct {
	name  string
	args  func(f fixture) map[string]any
	check func(t *testing.T, f fixture, obj map[string]any, text string)
}

// toolCalls calls every tool once, in order (teardown tools last). A tool
// in the catalog without an entry here fails TestEveryTool: add one.
var toolCalls = []toolCall{
	{"get_server_info", noArgs, func(t *testing.T, f fixture, obj map[string]any, _ string) {
		prov, _ := obj["provenance"].(map[string]any)
		if prov["state"] != "existing" || prov["config"] != "other" {
			t.Errorf("get_server_info provenance = %v; want existing/other for a server the test started", prov)
		}
		if n, _ := obj["sessions"].(float64); n < 1 {
			t.Errorf("get_server_info sessions = %v; want at least 1", obj["sessions"])
		}
	}},
	{"list_sessions", noArgs, wantText(func(f fixture) string { return f.sessionID })},
	{"list_windows", func(f fixture) map[string]any { return map[string]any{"sessionId": f.sessionID} },
		wantText(func(f fixture) string { return f.windowID })},
	{"list_panes", func(f fixture) map[string]any { return map[string]any{"windowId": f.windowID} },
		wantText(func(f fixture) string { return f.paneID })},
	{"get_session_info", func(f fixture) map[string]any { return map[string]any{"sessionName": f.sessionName} },
		wantText(func(f fixture) string { return `"amp<&>"` })},
	{"get_window_info", func(f fixture) map[string]any { return map[string]any{"windowId": f.windowID} },
		wantText(func(f fixture) string { return f.paneID })},
	{"get_pane_info", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID} },
		wantText(func(f fixture) string { return f.paneID })},
	{"capture_pane", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID} },
		wantText(func(f fixture) string { return "<&> ready" })},
	{"snapshot_pane", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID} },
		wantText(func(f fixture) string { return "<&> ready" })},
	{"search_panes", func(f fixture) map[string]any { return map[string]any{"pattern": "<&> ready", "windowId": f.windowID} },
		wantText(func(f fixture) string { return `"paneId":"` + f.paneID + `"` })},
	{"find_pane_by_position", func(f fixture) map[string]any { return map[string]any{"windowId": f.windowID, "x": 0, "y": 0} },
		wantText(func(f fixture) string { return f.paneID })},
	{"call_read_tools_batch", func(f fixture) map[string]any {
		return map[string]any{"operations": []any{map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"paneId": f.paneID}}}}
	}, wantText(func(f fixture) string { return `"succeeded":1` })},
	{"show_option", func(f fixture) map[string]any { return map[string]any{"scope": "server", "name": "exit-empty"} },
		wantText(func(f fixture) string { return `"set":true` })},
	{"show_environment", noArgs, wantText(func(f fixture) string { return `"variables":[` })},
	{"show_hooks", func(f fixture) map[string]any { return map[string]any{"scope": "session"} },
		wantText(func(f fixture) string { return `"hooks":[` })},
	{"get_tmux_variables", func(f fixture) map[string]any {
		return map[string]any{"names": []string{"session_id"}, "target": f.paneID}
	}, wantText(func(f fixture) string { return f.sessionID })},
	// Input: the pane runs cat, which echoes what it gets.
	{"send_keys", func(f fixture) map[string]any {
		return map[string]any{"paneId": f.paneID, "text": "typed <&>;", "enter": true}
	},
		wantText(func(f fixture) string { return `"cohort":["` + f.paneID + `"]` })},
	{"send_keys_batch", func(f fixture) map[string]any {
		return map[string]any{"rows": []map[string]any{{"paneId": f.paneID, "text": "row"}, {"paneId": f.paneID, "keys": []string{"Enter"}}}}
	}, wantText(func(f fixture) string { return `"paneId":"` + f.paneID + `"` })},
	{"paste_text", func(f fixture) map[string]any {
		return map[string]any{"paneId": f.paneID, "text": "pasted <&>", "enter": true}
	},
		wantText(func(f fixture) string { return `"bytes":10` })},
	// Manage: each call acts on the fixture or on what an earlier call made.
	{"create_session", func(f fixture) map[string]any {
		return map[string]any{"sessionName": "made<&>", "width": 100, "height": 30}
	},
		remember("session", "sessionId", `"made<&>"`)},
	{"create_window", func(f fixture) map[string]any { return map[string]any{"sessionId": f.sessionID, "name": "w<&>#{pid}"} },
		remember("window", "windowId", `"w<&>#{pid}"`)},
	{"split_window", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID, "direction": "horizontal"} },
		remember("split", "paneId", `"paneId":"%`)},
	{"respawn_pane", func(f fixture) map[string]any { return map[string]any{"paneId": f.made["split"]} },
		wantText(func(f fixture) string { return f.made["split"] })},
	{"rename_session", func(f fixture) map[string]any {
		return map[string]any{"sessionId": f.made["session"], "name": "renamed<&>"}
	},
		wantText(func(f fixture) string { return `"renamed<&>"` })},
	{"rename_window", func(f fixture) map[string]any { return map[string]any{"windowId": f.made["window"], "name": "n<&>"} },
		wantText(func(f fixture) string { return `"n<&>"` })},
	{"set_pane_title", func(f fixture) map[string]any { return map[string]any{"paneId": f.made["split"], "title": "t<&>"} },
		wantText(func(f fixture) string { return `"t<&>"` })},
	{"resize_pane", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID, "width": 30} },
		wantText(func(f fixture) string { return `"width":30` })},
	{"resize_window", func(f fixture) map[string]any {
		return map[string]any{"windowId": f.windowID, "width": 150, "height": 40}
	},
		wantText(func(f fixture) string { return `"width":150` })},
	{"select_pane", func(f fixture) map[string]any { return map[string]any{"paneId": f.made["split"]} },
		wantText(func(f fixture) string { return `"active":true` })},
	{"select_window", func(f fixture) map[string]any { return map[string]any{"windowId": f.made["window"]} },
		wantText(func(f fixture) string { return `"active":true` })},
	{"select_layout", func(f fixture) map[string]any { return map[string]any{"windowId": f.windowID, "layout": "even-h"} },
		wantText(func(f fixture) string { return `"layout":"` })},
	{"swap_pane", func(f fixture) map[string]any {
		return map[string]any{"paneId": f.paneID, "targetPaneId": f.made["split"]}
	},
		wantText(func(f fixture) string { return f.windowID })},
	{"move_window", func(f fixture) map[string]any {
		return map[string]any{"windowId": f.made["window"], "sessionId": f.made["session"]}
	},
		wantText(func(f fixture) string { return f.made["session"] })},
	{"set_mouse_enabled", func(f fixture) map[string]any { return map[string]any{"sessionId": f.sessionID, "enabled": true} },
		wantText(func(f fixture) string { return `"enabled":true` })},
	{"set_history_limit", func(f fixture) map[string]any { return map[string]any{"lines": 20000} },
		wantText(func(f fixture) string { return `"lines":20000` })},
	{"set_synchronize_panes", func(f fixture) map[string]any { return map[string]any{"windowId": f.windowID, "enabled": false} },
		wantText(func(f fixture) string { return `"enabled":false` })},
	// Teardown, last.
	{"clear_pane_scrollback", func(f fixture) map[string]any { return map[string]any{"paneId": f.paneID} },
		wantText(func(f fixture) string { return f.paneID })},
	{"kill_pane", func(f fixture) map[string]any { return map[string]any{"paneId": f.made["split"]} },
		wantText(func(f fixture) string { return f.made["split"] })},
	{"kill_window", func(f fixture) map[string]any { return map[string]any{"windowId": f.made["window"]} },
		wantText(func(f fixture) string { return f.made["window"] })},
	{"kill_session", func(f fixture) map[string]any { return map[string]any{"sessionName": "renamed<&>"} },
		wantText(func(f fixture) string { return f.made["session"] })},
}

// remember checks that the answer contains want and keeps the id in field
// as f.made[key] for later calls.
func remember(key, field, want string) func(*testing.T, fixture, map[string]any, string) {
	return func(t *testing.T, f fixture, obj map[string]any, text string) {
		t.Helper()
		id, _ := obj[field].(string)
		if id == "" || !strings.Contains(text, want) {
			t.Errorf("answer has no %s or does not contain %q: %s", field, want, text)
		}
		f.made[key] = id
	}
}

func noArgs(fixture) map[string]any { return map[string]any{} }

// wantText checks that the answer's text contains a string.
func wantText(want func(f fixture) string) func(*testing.T, fixture, map[string]any, string) {
	return func(t *testing.T, f fixture, _ map[string]any, text string) {
		t.Helper()
		if w := want(f); !strings.Contains(text, w) {
			t.Errorf("answer does not contain %q: %s", w, text)
		}
	}
}

// TestEveryTool lists the tools of a server with every toolset and calls
// each one with valid arguments against real sessions and panes.
func TestEveryTool(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--toolsets", allToolsets)

	var want []string
	for _, name := range mcpserver.ToolNames() {
		if !slices.Contains(optInTools, name) {
			want = append(want, name)
		}
	}
	got := p.listTools()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("tools/list = %v; want %v", got, want)
	}

	called := map[string]bool{}
	for _, c := range toolCalls {
		if !slices.Contains(got, c.name) {
			t.Errorf("toolCalls names %s, which the server does not list; remove or rename the entry", c.name)
			continue
		}
		called[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			obj, text := p.answer(c.name, c.args(f))
			c.check(t, f, obj, text)
		})
	}
	for _, name := range got {
		if !called[name] {
			t.Errorf("tool %s is never called; add an entry with valid arguments to toolCalls in integration/stdio_test.go", name)
		}
	}
}

// TestMalformedArguments sends arguments the schema refuses: each is a
// tool error, and the server keeps serving.
func TestMalformedArguments(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)

	cases := []struct {
		what, tool string
		args       map[string]any
	}{
		{"wrong type", "capture_pane", map[string]any{"paneId": 3}},
		{"wrong type in an optional field", "capture_pane", map[string]any{"paneId": f.paneID, "start": "top"}},
		{"unknown field", "capture_pane", map[string]any{"paneId": f.paneID, "bogus": true}},
		{"unknown field on a tool without arguments", "list_sessions", map[string]any{"all": true}},
		{"missing required", "capture_pane", map[string]any{}},
		{"missing required", "get_window_info", map[string]any{}},
	}
	for _, c := range cases {
		res := p.call(c.tool, c.args)
		if !res.IsError {
			t.Errorf("%s: %s %v answered without isError: %s", c.what, c.tool, c.args, resultText(res))
		}
		if res.StructuredContent != nil {
			t.Errorf("%s: %s %v: a tool error carries structuredContent %v", c.what, c.tool, c.args, res.StructuredContent)
		}
		if resultText(res) == "" {
			t.Errorf("%s: %s %v: a tool error without a message", c.what, c.tool, c.args)
		}
		// Still serving.
		if _, text := p.answer("get_pane_info", map[string]any{"paneId": f.paneID}); !strings.Contains(text, f.paneID) {
			t.Errorf("after %s: get_pane_info answered %s", c.what, text)
		}
	}
}

// TestStdinEOF closes the client session, which closes the server's stdin:
// the server exits 0 at once and the tmux server keeps its sessions.
func TestStdinEOF(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	p.answer("list_sessions", map[string]any{})

	took, err := p.close()
	if err != nil {
		t.Errorf("exit after stdin EOF: %v; want status 0\nstderr:\n%s", err, p.stderr)
	}
	if code := p.exitStatus(); code != 0 {
		t.Errorf("exit status %d after stdin EOF; want 0", code)
	}
	if took >= exitDeadline {
		t.Errorf("exit took %s after stdin EOF; want under %s", took, exitDeadline)
	}
	t.Logf("exit after stdin EOF took %s", took)
	if out := ts.Run("list-sessions", "-F", "#{session_id}"); !strings.Contains(out, f.sessionID) {
		t.Errorf("after the server exited, tmux lists sessions %q; want %s still there", out, f.sessionID)
	}
}

// TestSIGTERM stops an idle server with SIGTERM: it exits 0 promptly.
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket)
	p.answer("get_server_info", map[string]any{})

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	took := p.waitExit(10 * time.Second)
	if code := p.exitStatus(); code != 0 {
		t.Errorf("exit status %d after SIGTERM; want 0\nstderr:\n%s", code, p.stderr)
	}
	if took >= exitDeadline {
		t.Errorf("exit took %s after SIGTERM; want under %s", took, exitDeadline)
	}
	t.Logf("exit after SIGTERM took %s", took)
	if out := ts.Run("list-sessions", "-F", "#{session_id}"); !strings.Contains(out, f.sessionID) {
		t.Errorf("after SIGTERM, tmux lists sessions %q; want %s still there", out, f.sessionID)
	}
}

// TestDefaultSocket runs two servers with no socket configured: the first
// starts its own tmux on the socket libtmux-mcp under TMUX_TMPDIR with the
// minimal config and gets every toolset; the second finds it running and
// gets the defaults for an existing server. The daemon outlives both.
func TestDefaultSocket(t *testing.T) {
	t.Parallel()
	tmuxtest.Need(t, "tmux")
	tmpdir := shortTempDir(t)
	socket := filepath.Join(tmpdir, fmt.Sprintf("tmux-%d", os.Getuid()), tmux.DefaultSocketName)
	// Registered after shortTempDir's removal, so it runs before it.
	t.Cleanup(func() { exec.Command("tmux", "-S", socket, "kill-server").Run() })

	first := start(t, cleanEnv(t, tmpdir))
	line := first.startupLine()
	for _, want := range []string{"serving new " + tmux.DefaultSocketName, "toolsets execute,inspect,manage,teardown,"} {
		if !strings.Contains(line, want) {
			t.Errorf("first startup line %q does not contain %q", line, want)
		}
	}
	if fi, err := os.Stat(socket); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Errorf("no socket at %s (stat: %v)", socket, err)
	}
	info, _ := first.answer("get_server_info", map[string]any{})
	checkProvenance(t, "first", info, "new", "minimal")
	if info["socket"] != socket {
		t.Errorf("first get_server_info socket = %v; want %s", info["socket"], socket)
	}
	checkSelection(t, "first", first.listTools(), tmux.Provenance{State: "new", Config: "minimal"})

	second := start(t, cleanEnv(t, tmpdir))
	line = second.startupLine()
	for _, want := range []string{"serving existing " + tmux.DefaultSocketName, "toolsets execute,inspect,manage,"} {
		if !strings.Contains(line, want) {
			t.Errorf("second startup line %q does not contain %q", line, want)
		}
	}
	info, _ = second.answer("get_server_info", map[string]any{})
	checkProvenance(t, "second", info, "existing", "other")
	checkSelection(t, "second", second.listTools(), tmux.Provenance{State: "existing", Config: "other"})

	for _, p := range []*proc{first, second} {
		if _, err := p.close(); err != nil {
			t.Errorf("exit after stdin EOF: %v; want status 0\nstderr:\n%s", err, p.stderr)
		}
		if code := p.exitStatus(); code != 0 {
			t.Errorf("exit status %d after stdin EOF; want 0", code)
		}
	}
	// The daemon keeps running with no sessions (exit-empty off).
	out, err := exec.Command("tmux", "-S", socket, "display-message", "-p", "#{pid}").CombinedOutput()
	if err != nil {
		t.Errorf("the default daemon did not outlive its clients: %v: %s", err, out)
	}
}

func checkProvenance(t *testing.T, who string, info map[string]any, state, config string) {
	t.Helper()
	prov, _ := info["provenance"].(map[string]any)
	if prov["state"] != state || prov["config"] != config {
		t.Errorf("%s get_server_info provenance = %v; want {state:%s config:%s}", who, prov, state, config)
	}
}

// checkSelection compares the listed tools with the policy's default for
// the provenance.
func checkSelection(t *testing.T, who string, got []string, prov tmux.Provenance) {
	t.Helper()
	sel, err := mcpserver.Select(prov, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, sel.Tools) {
		t.Errorf("%s tools/list = %v; want %v (the default for %s/%s)", who, got, sel.Tools, prov.State, prov.Config)
	}
	for _, name := range got {
		if slices.Contains(optInTools, name) {
			t.Errorf("%s lists opt-in tool %s without --enable-tool", who, name)
		}
	}
}

// TestStdoutIsOnlyJSONRPC speaks the protocol by hand over raw pipes and
// checks that every line the server writes to stdout is a JSON-RPC message.
func TestStdoutIsOnlyJSONRPC(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	b := build(t)

	stderr := newSyncBuffer()
	cmd := exec.Command(b.server, "--socket", ts.Socket, "--log-level", "debug")
	cmd.Env = cleanEnv(t, ts.Dir)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		readErr <- sc.Err()
		close(lines)
	}()

	var all []string
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatalf("write %s: %v\nstderr:\n%s", msg, err, stderr)
		}
	}
	// await reads lines until the response with id arrives.
	await := func(id int) map[string]any {
		t.Helper()
		deadline := time.After(callTimeout)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed before the answer to request %d; stderr:\n%s", id, stderr)
				}
				all = append(all, l)
				var msg map[string]any
				if json.Unmarshal([]byte(l), &msg) == nil && msg["id"] == float64(id) {
					return msg
				}
			case <-deadline:
				t.Fatalf("no answer to request %d within %s; stderr:\n%s", id, callTimeout, stderr)
			}
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if msg := await(1); msg["result"] == nil {
		t.Fatalf("initialize answered %v", msg)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	await(2)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"capture_pane","arguments":{"paneId":"` + f.paneID + `"}}}`)
	if msg := await(3); !strings.Contains(fmt.Sprint(msg["result"]), "<&> ready") {
		t.Errorf("capture_pane answered %v; want the pane's <&> ready", msg)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"capture_pane","arguments":{"paneId":7}}}`)
	await(4)
	send(`{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{}}`)
	if msg := await(5); msg["error"] == nil {
		t.Errorf("an unknown method answered %v; want a JSON-RPC error", msg)
	}

	stdin.Close()
	for l := range lines {
		all = append(all, l)
	}
	if err := <-readErr; err != nil {
		t.Errorf("read stdout: %v", err)
	}
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after stdin EOF: %v; want status 0\nstderr:\n%s", err, stderr)
	}

	for i, l := range all {
		var msg map[string]any
		if err := json.Unmarshal([]byte(l), &msg); err != nil {
			t.Errorf("stdout line %d is not JSON (%v): %q", i+1, err, l)
			continue
		}
		if msg["jsonrpc"] != "2.0" {
			t.Errorf("stdout line %d is not JSON-RPC 2.0: %q", i+1, l)
		}
	}
	if len(all) < 5 {
		t.Errorf("stdout had %d lines; want at least the 5 answers", len(all))
	}
	if !strings.Contains(stderr.String(), " serving ") {
		t.Errorf("no startup line on stderr:\n%s", stderr)
	}
}
