package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// enrolled is a server with tmux_run and one zsh pane a "person" was
// invited to enroll (and, after enrollPane, did).
type enrolled struct {
	p      *proc
	ts     *tmuxtest.Server
	pane   string
	file   string // the setup file
	gen    string
	schema *jsonschema.Resolved
}

// invitePane starts a fresh zsh pane, types before into it, and starts the
// server with tmux_run inviting that pane (plus args); it waits for the
// invitation on stderr.
func invitePane(t testing.TB, args []string, before ...string) *enrolled {
	t.Helper()
	return invitePaneEnv(t, args, nil, before...)
}

// invitePaneEnv is invitePane with env added to the server's environment.
func invitePaneEnv(t testing.TB, args, env []string, before ...string) *enrolled {
	t.Helper()
	b := build(t)
	if b.helper == "" {
		t.Fatal("cmd/libtmux-mcp-helper is missing")
	}
	ts := tmuxServer(t)
	pane := ts.ZshSession("run")
	for _, line := range before {
		ts.Type(pane, line, true)
	}
	file := filepath.Join(ts.Dir, "enroll.zsh")
	args = append([]string{"--socket", ts.Socket, "--enable-tool", "tmux_run", "--enroll-pane", pane + "=" + file, "--helper", b.helper}, args...)
	p := start(t, cleanEnv(t, shortTempDir(t), append([]string{"LIBTMUX_MCP_SHELL_ANSWER_MS=4000", "LIBTMUX_MCP_LOG=info"}, env...)...), args...)
	p.startupLine()
	if _, ok := p.stderr.line("source "+file, 30*time.Second); !ok {
		t.Fatalf("no invitation on stderr:\n%s", p.stderr)
	}
	e := &enrolled{p: p, ts: ts, pane: pane, file: file, schema: outputSchema(t, p)}
	obj, _ := p.answer("get_pane_info", map[string]any{"paneId": pane})
	e.gen = obj["pane"].(map[string]any)["serverGeneration"].(string)
	return e
}

// source sources the setup file in the pane, as the person would, and
// waits until the server logs the enrollment and the pane says so.
func (e *enrolled) source(t testing.TB) {
	t.Helper()
	marks := strings.Count(e.p.stderr.String(), "tmux_run pane enrolled")
	e.ts.Type(e.pane, "source "+e.file, true)
	if !e.p.stderr.waitCount("tmux_run pane enrolled", marks+1, 20*time.Second) {
		t.Fatalf("the pane did not enroll; it shows:\n%s\nserver stderr:\n%s", e.ts.Capture(e.pane), e.p.stderr)
	}
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "tmux_run enrolled in pane "+e.pane) })
	// The HELLO connection closed with the answer; the prompt that follows attaches its own.
	sh := shellPID(t, e)
	tmuxtest.Eventually(t, 20*time.Second, "the enrolled shell's prompt attaching its connection", func() bool { return holdsSocket(sh) },
		func() string { return "the pane shows:\n" + e.ts.Capture(e.pane) })
	if _, err := os.Stat(e.file); !os.IsNotExist(err) {
		t.Errorf("the setup file is still there after enrollment (%v)", err)
	}
	if got := e.state(t); got != "enrolled" {
		t.Fatalf("pane enrollment after sourcing = %q", got)
	}
}

// state is the pane's enrollment as get_pane_info reports it.
func (e *enrolled) state(t testing.TB) string {
	t.Helper()
	obj, _ := e.p.answer("get_pane_info", map[string]any{"paneId": e.pane})
	return obj["pane"].(map[string]any)["enrollment"].(string)
}

// enrollPane invites a fresh zsh pane and enrolls it.
func enrollPane(t testing.TB, before ...string) *enrolled {
	t.Helper()
	e := invitePane(t, nil, before...)
	e.source(t)
	return e
}

func outputSchema(t testing.TB, p *proc) *jsonschema.Resolved {
	t.Helper()
	for tool, err := range p.cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "tmux_run" {
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("resolve the published output schema: %v", err)
		}
		return r
	}
	t.Fatal("tmux_run is not listed")
	return nil
}

// run calls tmux_run and returns the answer, after validating it against
// the published output schema and checking isError matches ok.
func (e *enrolled) run(t testing.TB, ctx context.Context, args map[string]any) map[string]any {
	t.Helper()
	if _, ok := args["target"]; !ok {
		args["target"] = map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen}
	}
	res, err := e.p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tmux_run", Arguments: args})
	if err != nil {
		t.Fatalf("tmux_run: protocol error: %v\nstderr:\n%s", err, e.p.stderr)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("tmux_run answer is not an object: %s", raw)
	}
	e.validate(t, obj)
	if res.IsError == (obj["ok"] == true) {
		t.Errorf("isError=%v but ok=%v", res.IsError, obj["ok"])
	}
	if obj["ok"] != true {
		// Shown only if the test fails: why the server refused, in its log.
		t.Logf("tmux_run refused; server stderr so far:\n%s", e.p.stderr)
	}
	return obj
}

// validate checks an answer against the published output schema.
func (e *enrolled) validate(t testing.TB, obj map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(obj)
	var generic any
	json.Unmarshal(raw, &generic)
	if err := e.schema.Validate(generic); err != nil {
		t.Errorf("answer does not validate against the published schema: %v\n%s", err, raw)
	}
}

func data(t testing.TB, obj map[string]any) map[string]any {
	t.Helper()
	d, ok := obj["data"].(map[string]any)
	if !ok {
		t.Fatalf("not a success: %v", obj)
	}
	return d
}

func errorOf(t testing.TB, obj map[string]any, code, delivery string) map[string]any {
	t.Helper()
	er, ok := obj["error"].(map[string]any)
	if !ok {
		t.Fatalf("want error %s, got success %v", code, obj)
	}
	if er["code"] != code || er["delivery"] != delivery {
		t.Errorf("error = %v; want code %s delivery %s", er, code, delivery)
	}
	return er
}

func TestTmuxRunCompletion(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	ctx := context.Background()
	for _, tc := range []struct {
		script, state  string
		status, signal float64
		stdout, stderr string
	}{
		{"echo out; echo err >&2", "exited", 0, 0, "out\n", "err\n"},
		{"exit 3", "exited", 3, 0, "", ""},
		{"no-such-command-here", "exited", 127, 0, "", ""},
		{"kill -KILL $$", "signaled", 0, 9, "", ""},
		{"kill -TERM $$", "signaled", 0, 15, "", ""},
		{"cat; echo rc=$?", "exited", 0, 0, "rc=0\n", ""},
		// A script that begins with - or + is a script, never options of /bin/sh.
		{"-x", "exited", 127, 0, "", ""},
		{"+x 2>/dev/null; echo ran", "exited", 0, 0, "ran\n", ""},
	} {
		d := data(t, e.run(t, ctx, map[string]any{"script": tc.script}))
		c := d["completion"].(map[string]any)
		if c["state"] != tc.state || tc.state == "exited" && c["exit_status"] != tc.status || tc.state == "signaled" && c["signal"] != tc.signal {
			t.Errorf("%q: completion %v", tc.script, c)
		}
		if so := d["stdout"].(map[string]any); so["data"] != tc.stdout && tc.script != "no-such-command-here" {
			t.Errorf("%q: stdout %v; want %q", tc.script, so, tc.stdout)
		}
		if se := d["stderr"].(map[string]any); tc.stderr != "" && se["data"] != tc.stderr {
			t.Errorf("%q: stderr %v; want %q", tc.script, se, tc.stderr)
		}
	}
	bin := data(t, e.run(t, ctx, map[string]any{"script": `printf '\377\000\001'`}))["stdout"].(map[string]any)
	if bin["encoding"] != "base64" || bin["data"] != "/wAB" || bin["bytes"] != 3.0 {
		t.Errorf("binary stdout = %v; want base64 /wAB, 3 bytes", bin)
	}
}

func TestTmuxRunEnvironmentAndNoInjection(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "lr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	e := enrollPane(t, "cd "+dir, "export SHOWN=yes; HIDDEN=no")
	bangFile := filepath.Join(e.ts.Dir, "bang")
	e.ts.Type(e.pane, "sleep 0 &!", true)
	e.ts.Type(e.pane, "echo $! > "+bangFile+".tmp; mv "+bangFile+".tmp "+bangFile, true)
	tmuxtest.WaitFile(t, bangFile)
	bang, _ := os.ReadFile(bangFile)
	e.ts.Type(e.pane, "clear; (exit 7)", true)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.TrimSpace(s) == "%" })
	hist := func() string { b, _ := os.ReadFile(filepath.Join(e.ts.Dir, "hist")); return string(b) }
	screenBefore := e.ts.Run("capture-pane", "-p", "-e", "-t", e.pane)
	histBefore := hist()

	d := data(t, e.run(t, context.Background(), map[string]any{"script": `pwd; echo "$SHOWN-$HIDDEN"; cd /; export SHOWN=changed; f() { :; }`}))
	if got := d["stdout"].(map[string]any)["data"]; got != dir+"\nyes-\n" {
		t.Errorf("stdout %q; want cwd %s and only the exported variable", got, dir)
	}
	if after := e.ts.Run("capture-pane", "-p", "-e", "-t", e.pane); after != screenBefore {
		t.Errorf("the terminal changed during the run:\nbefore %q\nafter  %q", screenBefore, after)
	}
	if hist() != histBefore {
		t.Errorf("the history changed during the run")
	}
	e.ts.Type(e.pane, `echo "st=$? bang=${!:-none} pwd=$PWD shown=$SHOWN f=$(whence -w f)"; jobs`, true)
	screen := e.ts.WaitFor(e.pane, func(s string) bool {
		return strings.Contains(s, "\nst=") && strings.HasSuffix(strings.TrimSpace(s), "%")
	})
	want := "st=7 bang=" + strings.TrimSpace(string(bang)) + " pwd=" + dir + " shown=yes f=f: none\n%"
	if !strings.Contains(screen, want) {
		t.Errorf("the shell's state changed ($?, $!, cwd, environment, functions or jobs); want %q in:\n%s", want, screen)
	}
}

func TestTmuxRunShellNotReady(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	mark := filepath.Join(e.ts.Dir, "ran")
	script := map[string]any{"script": "touch " + mark}

	e.ts.Type(e.pane, "echo typed-but-not-sent", false)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "typed-but-not-sent") })
	errorOf(t, e.run(t, context.Background(), script), "shell_busy", "not_sent")
	e.ts.Run("send-keys", "-t", e.pane, "C-u")

	e.ts.Type(e.pane, `echo "`, true) // a continuation line (PS2)
	e.ts.WaitFor(e.pane, func(s string) bool { return strings.Contains(s, "dquote>") })
	errorOf(t, e.run(t, context.Background(), script), "shell_busy", "not_sent")
	// zsh flushes typeahead on an interrupt: type the next line only at the
	// fresh prompt. An interrupt that lands while zsh is still returning
	// from the broker handler that answered BUSY is taken by that handler,
	// and the continuation line stays (seen once in CI, under load): a
	// second C-c, as a person would press, then ends it.
	freshPrompt := func() bool {
		s := e.ts.Capture(e.pane)
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return lines[len(lines)-1] == "%" && strings.Contains(s, "dquote>")
	}
	for try := 0; ; try++ {
		e.ts.Run("send-keys", "-t", e.pane, "C-c")
		deadline := time.Now().Add(3 * time.Second)
		for !freshPrompt() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // the polling interval, not synchronization
		}
		if freshPrompt() {
			break
		}
		if try == 2 {
			t.Fatalf("three C-c did not bring back the prompt; the pane shows:\n%s", e.ts.Capture(e.pane))
		}
	}

	flag := filepath.Join(e.ts.Dir, "slept")
	// Longer than the answer deadline (4 s in these tests).
	e.ts.Type(e.pane, "sleep 6; touch "+flag, true)
	e.ts.WaitCommand(e.pane, "sleep")
	begin := time.Now()
	errorOf(t, e.run(t, context.Background(), script), "not_at_prompt", "not_sent")
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("not_at_prompt took %s", d)
	}
	// The prompt comes back and the queued request is cancelled, not run.
	// (The flag exists while touch still has the terminal: wait for the
	// prompt itself, as a person would before trying again.)
	e.ts.WaitFor(e.pane, func(s string) bool {
		_, err := os.Stat(flag)
		return err == nil && strings.HasSuffix(strings.TrimSpace(s), "%")
	})
	data(t, e.run(t, context.Background(), map[string]any{"script": "true"}))
	if _, err := os.Stat(mark); err == nil {
		t.Error("a refused request ran later")
	}
}

func TestTmuxRunRefusals(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	ctx := context.Background()
	other := e.ts.NewSession("other", "sh")
	// not_enrolled names the step that helps: a person's libtmux-mcp enroll
	// for a pane never enrolled, list_panes for one that does not exist.
	for pane, want := range map[string]string{other: `eval "$(libtmux-mcp enroll)" at the zsh prompt of pane ` + other, "%999": "there is no pane %999 on this server; call list_panes"} {
		er := errorOf(t, e.run(t, ctx, map[string]any{"script": "true", "target": map[string]any{"kind": "pane", "id": pane, "generation": e.gen}}), "not_enrolled", "not_sent")
		if msg, _ := er["message"].(string); !strings.Contains(msg, want) {
			t.Errorf("not_enrolled for %s: %q; want it to say %q", pane, msg, want)
		}
	}
	errorOf(t, e.run(t, ctx, map[string]any{"script": "true", "target": map[string]any{"kind": "pane", "id": e.pane, "generation": "stale"}}), "stale_generation", "not_sent")
	for _, target := range []map[string]any{
		{"kind": "window", "id": e.pane, "generation": e.gen},
		{"kind": "pane", "id": "3", "generation": e.gen},
		{"kind": "pane", "id": e.pane, "generation": ""},
	} {
		errorOf(t, e.run(t, ctx, map[string]any{"script": "true", "target": target}), "invalid_target", "not_sent")
	}
	errorOf(t, e.run(t, ctx, map[string]any{"script": strings.Repeat("x", 65537)}), "invalid_script", "not_sent")
	// 65,536 bytes exactly is allowed, counted in bytes, not characters.
	data(t, e.run(t, ctx, map[string]any{"script": ": " + strings.Repeat("x", 65534)}))
	errorOf(t, e.run(t, ctx, map[string]any{"script": ": " + strings.Repeat("é", 32768)}), "invalid_script", "not_sent")
	errorOf(t, e.run(t, ctx, map[string]any{"script": "true\x00"}), "invalid_script", "not_sent")
	er := errorOf(t, e.run(t, ctx, map[string]any{"script": "yes | head -c 100", "stdout_limit": 10}), "output_overflow", "observed")
	if eff := er["effects"].(map[string]any); eff["state"] != "unknown" || eff["completion"].(map[string]any)["state"] != "unobserved" {
		t.Errorf("overflow effects = %v", eff)
	}
}

func TestTmuxRunInProgressAndCancel(t *testing.T) {
	t.Parallel()
	e := enrollPane(t)
	pidfile := filepath.Join(e.ts.Dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "tmux_run", Arguments: map[string]any{
			"target": map[string]any{"kind": "pane", "id": e.pane, "generation": e.gen},
			"script": "echo $$ > " + pidfile + ".tmp && mv " + pidfile + ".tmp " + pidfile + "; sleep 60",
		}})
		done <- err
	}()
	var pid int
	e.ts.WaitFor(e.pane, func(string) bool {
		b, err := os.ReadFile(pidfile)
		if err != nil {
			return false
		}
		_, err = fmtSscan(strings.TrimSpace(string(b)), &pid)
		return err == nil
	})
	errorOf(t, e.run(t, context.Background(), map[string]any{"script": "true"}), "run_in_progress", "not_sent")
	cancel()
	groupGone(t, pid)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled run returned %v; want context.Canceled", err)
	}
	// The client stops waiting at once; the server finishes stopping the
	// cancelled run in the background, then the pane is free again.
	tmuxtest.Eventually(t, 10*time.Second, "the pane free again after the cancel", func() bool {
		obj := e.run(t, context.Background(), map[string]any{"script": "true"})
		if obj["ok"] == true {
			return true
		}
		errorOf(t, obj, "run_in_progress", "not_sent")
		return false
	})
}
