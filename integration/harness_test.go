package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/testbin"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is the MCP revision the test client asks for.
const protocolVersion = "2025-11-25"

// callTimeout bounds every request the tests make; a hung server fails the
// test instead of the whole run.
const callTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	if code, ok := asForger(); ok {
		os.Exit(code)
	}
	tmuxtest.WaitingParallel()
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// binaries are the built programs under test.
type binaries struct {
	server string // libtmux-mcp
	helper string // libtmux-mcp-helper
}

// build compiles the binaries once per test run (see internal/testbin).
func build(t testing.TB) binaries {
	p := testbin.Build(t)
	return binaries{server: p.Server, helper: p.Helper}
}

// shortTempDir makes a private directory with a short path (see
// tmuxtest.ShortTempDir), removed in t.Cleanup.
func shortTempDir(t testing.TB) string {
	t.Helper()
	return tmuxtest.ShortTempDir(t, "lm")
}

// cleanEnv is the whole environment of a binary under test: PATH, a
// private HOME, TMUX_TMPDIR pointing at tmuxTmpdir (so a default socket is
// never the developer's), plus extra.
func cleanEnv(t testing.TB, tmuxTmpdir string, extra ...string) []string {
	t.Helper()
	home := filepath.Join(shortTempDir(t), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMUX_TMPDIR=" + tmuxTmpdir}
	if testbin.Race() {
		// The race runtime sleeps 1 s at exit by default, which would hide
		// the server's own exit time from the tests that measure it.
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	return append(env, extra...)
}

// syncBuffer collects a child's stderr; readers may wait for text to appear.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{})} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// line waits until a whole line containing substr has been written and
// returns it, or returns false at the deadline.
func (s *syncBuffer) line(substr string, timeout time.Duration) (string, bool) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		text, changed := s.b.String(), s.changed
		s.mu.Unlock()
		for l := range strings.Lines(text) {
			if strings.HasSuffix(l, "\n") && strings.Contains(l, substr) {
				return strings.TrimSuffix(l, "\n"), true
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			return "", false
		}
	}
}

// proc is one running libtmux-mcp with a connected client session.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stderr *syncBuffer
	cs     *mcp.ClientSession

	progress chan *mcp.ProgressNotificationParams // notifications the server sent

	closeOnce sync.Once
	closeTime time.Duration
	closeErr  error
}

// start runs the server binary with args and env (see cleanEnv) and
// connects an MCP client to it over its stdin and stdout. The process is
// stopped in t.Cleanup if the test has not stopped it.
func start(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	return startProgram(t, build(t).server, env, args...)
}

// startProgram is start for any MCP server program over stdio (a peer to
// compare with, in the benchmarks).
func startProgram(t testing.TB, program string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, stderr: newSyncBuffer(), progress: make(chan *mcp.ProgressNotificationParams, 64)}
	p.cmd = exec.Command(program, args...)
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	// A longer grace than the SDK's 5 s: tests measure the exit themselves
	// and must never see the transport's own SIGTERM.
	transport := &mcp.CommandTransport{Command: p.cmd, TerminateDuration: 10 * time.Second}
	client := mcp.NewClient(&mcp.Implementation{Name: "libtmux-mcp-integration", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case p.progress <- req.Params:
			default: // a test that does not read them
			}
		},
	})
	cs, err := client.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		if p.cmd.Process != nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		t.Fatalf("connect to %s %s: %v\nstderr:\n%s", program, strings.Join(args, " "), err, p.stderr)
	}
	p.cs = cs
	t.Cleanup(func() {
		p.close()
		if strings.Contains(p.stderr.String(), "DATA RACE") {
			t.Errorf("the server reported a data race; its stderr:\n%s", p.stderr)
		}
	})
	return p
}

// close closes the client session, which closes the child's stdin, and
// waits for the child to exit. It reports how long that took and the
// child's exit error (nil for status 0).
func (p *proc) close() (time.Duration, error) {
	p.closeOnce.Do(func() {
		begin := time.Now()
		p.closeErr = p.cs.Close()
		p.closeTime = time.Since(begin)
	})
	return p.closeTime, p.closeErr
}

// startupLine waits for the server's startup line on stderr.
func (p *proc) startupLine() string {
	p.t.Helper()
	line, ok := p.stderr.line(" serving ", 30*time.Second)
	if !ok {
		p.t.Fatalf("no startup line on stderr; stderr:\n%s", p.stderr)
	}
	return line
}

// listTools returns the names the server lists, in its order.
func (p *proc) listTools() []string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var names []string
	for tool, err := range p.cs.Tools(ctx, nil) {
		if err != nil {
			p.t.Fatalf("tools/list: %v\nstderr:\n%s", err, p.stderr)
		}
		names = append(names, tool.Name)
	}
	return names
}

// call calls a tool and returns its result; a protocol error fails the test.
func (p *proc) call(name string, args any) *mcp.CallToolResult {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		p.t.Fatalf("tools/call %s %v: protocol error: %v\nstderr:\n%s", name, args, err, p.stderr)
	}
	return res
}

// answer calls a tool that must succeed and returns its structured answer,
// after checking the answer's shape: structuredContent is an object and the
// text content is the same JSON, with <, > and & left unescaped.
func (p *proc) answer(name string, args any) (obj map[string]any, text string) {
	p.t.Helper()
	res := p.call(name, args)
	text = resultText(res)
	if res.IsError {
		p.t.Fatalf("%s %v: tool error: %s", name, args, text)
	}
	obj, ok := res.StructuredContent.(map[string]any)
	if !ok {
		p.t.Fatalf("%s: structuredContent is %T, not an object: %v", name, res.StructuredContent, res.StructuredContent)
	}
	if n := len(res.Content); n != 1 {
		p.t.Errorf("%s: %d content blocks; want 1 text block", name, n)
	}
	var fromText any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil {
		p.t.Fatalf("%s: text content is not JSON: %v\n%s", name, err, text)
	}
	if !reflect.DeepEqual(fromText, any(obj)) {
		raw, _ := json.Marshal(obj)
		p.t.Errorf("%s: text content differs from structuredContent:\ntext: %s\nstructured: %s", name, text, raw)
	}
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if strings.Contains(text, esc) {
			p.t.Errorf("%s: text content escapes HTML characters (%s): %s", name, esc, text)
			break
		}
	}
	return obj, text
}

// resultText joins a result's text content.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// tmuxServer starts a private tmux server for one test.
func tmuxServer(t testing.TB) *tmuxtest.Server {
	t.Helper()
	tmuxtest.Need(t, "tmux")
	return tmuxtest.Start(t)
}

// waitExit waits for a process the client session is attached to: the
// session ends when the child closes its stdout, and ending it reaps the
// child. It reports how long that took, or fails at the deadline.
func (p *proc) waitExit(timeout time.Duration) time.Duration {
	p.t.Helper()
	begin := time.Now()
	done := make(chan struct{})
	go func() { p.cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		p.t.Fatalf("the server did not exit within %s; stderr:\n%s", timeout, p.stderr)
	}
	return time.Since(begin)
}

// exitStatus is the child's exit status; it fails the test while the
// child has not been reaped.
func (p *proc) exitStatus() int {
	p.t.Helper()
	if p.cmd.ProcessState == nil {
		p.t.Fatal("the server process has not been reaped")
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitCount waits until substr occurs at least n times, or timeout.
func (s *syncBuffer) waitCount(substr string, n int, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		text, changed := s.b.String(), s.changed
		s.mu.Unlock()
		if strings.Count(text, substr) >= n {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

// controlClients is the pids of the control-mode clients attached to ts's
// server (a wait's or a view's), space-separated; "" when there is none.
func controlClients(ts *tmuxtest.Server) string {
	var pids []string
	for _, l := range strings.Split(ts.Run("list-clients", "-F", "#{client_control_mode} #{client_pid}"), "\n") {
		if pid, ok := strings.CutPrefix(l, "1 "); ok {
			pids = append(pids, pid)
		}
	}
	return strings.Join(pids, " ")
}
