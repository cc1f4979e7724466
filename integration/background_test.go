package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 29: runs that outlive a call. tmux_run_start answers once the script started; the run
// goes on in a helper of its own while the enrolled shell stays at its prompt; wait_for_run
// collects it, cancel_run stops it, list_runs finds it.

// clientTimeout is the request timeout of the client in these tests: shorter than the runs.
const clientTimeout = 3 * time.Second

// callWithin calls a tool under the client's own request timeout and returns its structured
// answer and text; a protocol error (the timeout among them) fails the test.
func (e *enrolled) callWithin(t testing.TB, name string, args map[string]any) (map[string]any, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	res, err := e.p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error within the client's %s: %v\nstderr:\n%s", name, clientTimeout, err, e.p.stderr)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("%s answer is not an object: %s (%s)", name, raw, resultText(res))
	}
	return obj, resultText(res), res.IsError
}

// startRun calls tmux_run_start with script and returns the handle.
func (e *enrolled) startRun(t testing.TB, script string) string {
	t.Helper()
	obj, text, isErr := e.callWithin(t, "tmux_run_start", map[string]any{
		"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen}, "script": script})
	d, _ := obj["data"].(map[string]any)
	handle, _ := d["handle"].(string)
	if isErr || obj["ok"] != true || !strings.HasPrefix(handle, "trs-") {
		t.Fatalf("tmux_run_start: %s; want ok with a trs- handle", text)
	}
	if a, _ := d["authorization"].(map[string]any); a["pane_id"] != e.pane || a["state"] != "authorized" {
		t.Errorf("tmux_run_start authorization %v; want authorized for %s", a, e.pane)
	}
	return handle
}

// waitRun calls wait_for_run (each call within the client's timeout) until the run is no
// longer running, and returns the last answer.
func (e *enrolled) waitRun(t testing.TB, handle string, within time.Duration) (map[string]any, string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		obj, text, isErr := e.callWithin(t, "wait_for_run", map[string]any{"handle": handle, "timeoutMs": 2000})
		if isErr {
			t.Fatalf("wait_for_run: %s", text)
		}
		if obj["state"] != "running" {
			return obj, text
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run %s still runs after %s: %s", handle, within, text)
		}
	}
}

// listedRun is the list_runs row of handle, or nil.
func (e *enrolled) listedRun(t testing.TB, handle string) map[string]any {
	t.Helper()
	obj, _ := e.p.answer("list_runs", map[string]any{})
	runs, _ := obj["runs"].([]any)
	for _, r := range runs {
		if row := r.(map[string]any); row["handle"] == handle {
			return row
		}
	}
	return nil
}

// The acceptance's first case: a script longer than the client's request timeout is started,
// the person uses the pane's prompt and a foreground tmux_run runs there meanwhile, and the
// run is collected later with its exact exit status and both streams.
func TestRunStartOutlivesTheClientTimeout(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	gate := filepath.Join(e.ts.Dir, "gate")
	handle := e.startRun(t, fmt.Sprintf("echo begun; echo warned >&2; while [ ! -e %s ]; do sleep 0.05; done; sleep %d; echo done; echo last >&2; exit 3",
		gate, int(clientTimeout/time.Second)+1))
	if row := e.listedRun(t, handle); row == nil || row["state"] != "running" || row["tool"] != "tmux_run_start" || row["paneId"] != e.pane {
		t.Fatalf("list_runs row %v; want %s running tmux_run_start in %s", row, handle, e.pane)
	}

	// The person sees it with libtmux-mcp status while it goes.
	if out := status(t, e.ts, e.pane); !strings.Contains(out, "running") || !strings.Contains(out, "echo begun") {
		t.Errorf("libtmux-mcp status during the background run does not show it running:\n%s", out)
	}
	// The shell is at its prompt, free: the person types there, and a foreground run goes.
	e.ts.Type(e.pane, "echo person-$((6*7))", true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "person-42") })
	d := data(t, e.run(t, context.Background(), map[string]any{"script": "echo foreground"}))
	if got := d["stdout"].(map[string]any)["data"]; got != "foreground\n" {
		t.Errorf("a foreground tmux_run beside the background run: stdout %q; want foreground", got)
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	obj, text := e.waitRun(t, handle, 60*time.Second)
	if obj["state"] != "completed" || obj["exitStatus"] != 3.0 || obj["stdout"] != "begun\ndone\n" || obj["stderr"] != "warned\nlast\n" {
		t.Fatalf("wait_for_run: %s; want completed, exit 3, stdout begun+done, stderr warned+last", text)
	}
	if row := e.listedRun(t, handle); row == nil || row["state"] != "completed" || row["exitStatus"] != 3.0 {
		t.Errorf("list_runs row after the end %v; want completed, exit 3", row)
	}
	// From the last cursor, nothing is new.
	obj, text, _ = e.callWithin(t, "wait_for_run", map[string]any{"handle": handle, "cursor": obj["cursor"]})
	if obj["stdout"] != nil || obj["stderr"] != nil || obj["state"] != "completed" {
		t.Errorf("wait_for_run from the last cursor: %s; want no output", text)
	}
}

// The acceptance's second case: a background script printing 20 MB is not stopped; it is
// collected with its head, its tail, the exact count of what was left out, and its exit status
// (a tmux_run of the same script answers output_overflow and nothing else).
func TestRunStartKeepsHeadAndTailOfBigOutput(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the broker's spool of a 20 MB output")
	t.Parallel()
	e := enrollPane(t)
	const n = 20_000_000
	script := fmt.Sprintf("echo HEAD; head -c %d /dev/zero | tr '\\0' x; echo; echo TAIL; echo FINAL-SUMMARY >&2; exit 2", n)
	handle := e.startRun(t, script)
	obj, text := e.waitRun(t, handle, 120*time.Second)
	total := int64(len("HEAD\n") + n + len("\nTAIL\n"))
	stdout, _ := obj["stdout"].(string)
	dropped, _ := obj["stdoutDropped"].(float64)
	if obj["state"] != "completed" || obj["exitStatus"] != 2.0 || obj["stderr"] != "FINAL-SUMMARY\n" {
		t.Fatalf("wait_for_run: %.600s; want completed, exit 2, stderr FINAL-SUMMARY", text)
	}
	if !strings.HasPrefix(stdout, "HEAD\nxxx") || !strings.HasSuffix(stdout, "xxx\nTAIL\n") {
		t.Errorf("stdout does not keep both ends: %.80q … %q", stdout, stdout[max(0, len(stdout)-80):])
	}
	marker := regexp.MustCompile(`\n\[… (\d+) bytes left out …\]\n`)
	m := marker.FindStringSubmatch(stdout)
	if m == nil || m[1] != strconv.FormatInt(int64(dropped), 10) {
		t.Fatalf("stdout names no cut, or another count than stdoutDropped %d: %v", int64(dropped), m)
	}
	kept := int64(len(stdout) - len(m[0]))
	if kept+int64(dropped) != total {
		t.Errorf("kept %d + dropped %d = %d bytes; the script wrote %d", kept, int64(dropped), kept+int64(dropped), total)
	}
	if obj["cursor"] != fmt.Sprintf("B%d:%d", total, len("FINAL-SUMMARY\n")) {
		t.Errorf("cursor %v; want the end of both streams", obj["cursor"])
	}

	over := errorOf(t, e.run(t, context.Background(), map[string]any{"script": script}), "output_overflow", "observed")
	if msg, _ := over["message"].(string); !strings.Contains(msg, "tmux_run_start") {
		t.Errorf("output_overflow message %q does not name tmux_run_start", msg)
	}
}

// startedGroup starts a run whose script prints its own pid (its process group's id) first,
// then sleeps, and returns the handle and the group.
func (e *enrolled) startedGroup(t testing.TB) (string, int) {
	t.Helper()
	handle := e.startRun(t, "echo $$; sleep 300 & sleep 300")
	var pgid int
	tmuxtest.Eventually(t, 20*time.Second, "the script's first line", func() bool {
		obj, _, _ := e.callWithin(t, "wait_for_run", map[string]any{"handle": handle, "timeoutMs": 200})
		line, _, ok := strings.Cut(fmt.Sprint(obj["stdout"]), "\n")
		pgid, _ = strconv.Atoi(line)
		return ok && pgid > 1
	}, func() string { return "" })
	if noGroup(pgid) {
		t.Fatalf("the script's process group %d is not running", pgid)
	}
	return handle, pgid
}

// The acceptance's third case: cancel_run stops a running script, and its process group is
// gone after.
func TestCancelRunStopsTheBackgroundGroup(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the broker stopping a script's process group")
	t.Parallel()
	e := enrollPane(t)
	handle, pgid := e.startedGroup(t)
	obj, text, isErr := e.callWithin(t, "cancel_run", map[string]any{"handle": handle})
	if isErr || obj["state"] != "cancelled" {
		t.Fatalf("cancel_run: %s; want cancelled", text)
	}
	tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("process group %d gone after cancel_run", pgid), func() bool { return noGroup(pgid) },
		func() string { return "" })
	if row := e.listedRun(t, handle); row == nil || row["state"] != "cancelled" {
		t.Errorf("list_runs row after cancel_run %v; want cancelled", row)
	}
	// An unknown handle is refused with the way to find runs.
	_, text, isErr = e.callWithin(t, "wait_for_run", map[string]any{"handle": "trs-000000000000"})
	if !isErr || !strings.Contains(text, "list_runs") {
		t.Errorf("wait_for_run of an unknown handle: %s; want a tool error naming list_runs", text)
	}
}

// A server started as the README lends a pane (--toolsets inspect --enable-tool tmux_run) can
// follow, list and stop the runs it starts: wait_for_run, list_runs and cancel_run come with
// tmux_run, while nothing that types into a pane does.
func TestRunStartFollowedWithInspectOnly(t *testing.T) {
	t.Parallel()
	e := invitePane(t, []string{"--toolsets", "inspect"})
	e.source(t)
	tools, err := e.p.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range tools.Tools {
		listed[tl.Name] = true
	}
	for name, want := range map[string]bool{"tmux_run_start": true, "wait_for_run": true, "list_runs": true, "cancel_run": true,
		"run_shell_command": false, "send_keys": false, "paste_text": false} {
		if listed[name] != want {
			t.Errorf("%s listed %v; want %v", name, listed[name], want)
		}
	}
	handle := e.startRun(t, "echo begun; sleep 30")
	if row := e.listedRun(t, handle); row == nil || row["state"] != "running" {
		t.Fatalf("list_runs row %v; want %s running", row, handle)
	}
	var text string
	tmuxtest.Eventually(t, 20*time.Second, "wait_for_run showing the run's first line", func() bool {
		var obj map[string]any
		var isErr bool
		obj, text, isErr = e.callWithin(t, "wait_for_run", map[string]any{"handle": handle, "timeoutMs": 200})
		return !isErr && obj["state"] == "running" && obj["stdout"] == "begun\n"
	}, func() string { return "wait_for_run answered " + text })
	obj, text, isErr := e.callWithin(t, "cancel_run", map[string]any{"handle": handle})
	if isErr || obj["state"] != "cancelled" {
		t.Fatalf("cancel_run: %s; want cancelled", text)
	}
}

// noGroup reports whether no live process is left in process group pgid (a zombie waiting for
// pid 1 to reap it is not live).
func noGroup(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) || !liveMember(pgid)
}

// brokerDir is the private directory of the server's broker: the directory of the lock file
// the server holds open.
func brokerDir(t testing.TB, pid int) string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.Contains(filepath.Base(filepath.Dir(target)), "libtmux-mcp-broker-") {
			return filepath.Dir(target)
		}
	}
	t.Fatalf("server %d holds nothing in a broker directory open", pid)
	return ""
}

// The acceptance's last case: a server that exits with runs in flight leaves no process of
// them and no file.
func TestServerExitStopsBackgroundRuns(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	_, pgid := e.startedGroup(t)
	dir := brokerDir(t, e.p.cmd.Process.Pid)
	outputs, _ := filepath.Glob(filepath.Join(dir, "trs-*"))
	if len(outputs) != 2 {
		t.Fatalf("output files in %s: %v; want the run's stdout and stderr", dir, outputs)
	}
	for _, f := range outputs {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, fi.Mode())
		}
	}
	if _, err := e.p.close(); err != nil {
		t.Errorf("the server's exit: %v", err)
	}
	if !noGroup(pgid) {
		t.Errorf("process group %d of the background run outlives the server", pgid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the broker directory %s is still there after the server exited (%v)", dir, err)
	}
}

// A server's cap of background runs refuses one more with too_many_runs, naming the setting and
// list_runs; a run past the background time limit is stopped and answers timed_out.
func TestRunStartCapAndTimeLimit(t *testing.T) {
	tmuxtest.NotPerRelease(t, "the broker's cap and time limit of background runs")
	t.Parallel()
	e := invitePaneEnv(t, []string{"--background-timeout", "2s"}, []string{"LIBTMUX_MCP_MAX_BACKGROUND_RUNS=1"})
	e.source(t)
	handle, pgid := e.startedGroup(t)
	obj, text, isErr := e.callWithin(t, "tmux_run_start", map[string]any{
		"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen}, "script": "echo second"})
	er, _ := obj["error"].(map[string]any)
	if !isErr || er["code"] != "too_many_runs" || er["delivery"] != "not_sent" ||
		!strings.Contains(text, "LIBTMUX_MCP_MAX_BACKGROUND_RUNS") || !strings.Contains(text, "list_runs") {
		t.Errorf("a second tmux_run_start over a cap of 1: %s; want too_many_runs, not_sent, naming the setting and list_runs", text)
	}
	obj, text = e.waitRun(t, handle, 30*time.Second)
	if obj["state"] != "timed_out" || !strings.Contains(text, "background time limit") {
		t.Fatalf("wait_for_run past the time limit: %s; want timed_out naming the limit", text)
	}
	tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("process group %d gone after the time limit", pgid), func() bool { return noGroup(pgid) },
		func() string { return "" })
	// The slot is free again.
	second := e.startRun(t, "echo second")
	if obj, text := e.waitRun(t, second, 30*time.Second); obj["stdout"] != "second\n" || obj["exitStatus"] != 0.0 {
		t.Errorf("the next run after the slot freed: %s; want second, exit 0", text)
	}
}

// Issue 30, item 6: what a script leaves running in its process group is reported once its
// shell has ended: tmux_run in a second text block and the result's _meta (its contract object
// has no room), tmux_run_start in wait_for_run's survivors; none is said too.
func TestSurvivorsReported(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	call := func(script string) *mcp.CallToolResult {
		t.Helper()
		res, err := e.p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tmux_run", Arguments: map[string]any{
			"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen}, "script": script}})
		if err != nil || res.IsError || len(res.Content) != 2 {
			t.Fatalf("tmux_run %q: %v, %d blocks: %s", script, err, len(res.Content), resultText(res))
		}
		return res
	}
	clean := call("echo clean")
	if text := clean.Content[1].(*mcp.TextContent).Text; !strings.Contains(text, "no process") {
		t.Errorf("a script that left nothing: second block %q; want it to say none is left", text)
	}
	left := call("sleep 300 & echo left")
	text := left.Content[1].(*mcp.TextContent).Text
	meta, _ := left.Meta["com.git-pull.libtmux-mcp/survivors"].(map[string]any)
	if !strings.Contains(text, "1 process") || !strings.Contains(text, "sleep") || meta["count"] != 1.0 {
		t.Errorf("a script that left a sleep: second block %q, _meta %v; want 1 process named sleep", text, left.Meta)
	}
	killNamed(t, meta)

	handle := e.startRun(t, "sleep 300 & echo left")
	obj, text2 := e.waitRun(t, handle, 30*time.Second)
	if obj["survivors"] != 1.0 || !strings.Contains(text2, "sleep") {
		t.Errorf("wait_for_run of a background run that left a sleep: %s; want survivors 1 naming it", text2)
	}
	for _, pid := range regexp.MustCompile(`(\d+) sleep`).FindAllStringSubmatch(text2, -1) {
		n, _ := strconv.Atoi(pid[1])
		syscall.Kill(n, syscall.SIGKILL)
	}
}

// killNamed kills the processes a survivors _meta names ("pid name").
func killNamed(t *testing.T, meta map[string]any) {
	some, _ := meta["some"].([]any)
	for _, s := range some {
		pid, _, _ := strings.Cut(fmt.Sprint(s), " ")
		if n, err := strconv.Atoi(pid); err == nil {
			syscall.Kill(n, syscall.SIGKILL)
		}
	}
}
