package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gatedTmux writes a --tmux-bin wrapper whose calls block until open is
// called, then run the real tmux (or, with fail set, print fail on stderr
// and exit 1 instead). started reports how many calls have begun.
func gatedTmux(t *testing.T, fail string) (wrapper string, open func(show func() string), started func() int) {
	t.Helper()
	real, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	dir := shortTempDir(t)
	gate, opened, calls := filepath.Join(dir, "gate"), filepath.Join(dir, "opened"), filepath.Join(dir, "calls")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	then := "exec '" + real + "' \"$@\"\n"
	if fail != "" {
		then = "echo '" + fail + "' >&2\nexit 1\n"
	}
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\n[ -e '" + opened + "' ] || read _ < '" + gate + "'\n" + then
	started = func() int { b, _ := os.ReadFile(calls); return strings.Count(string(b), "\n") }
	wrapper = filepath.Join(dir, "tmux")
	tmuxtest.WriteExecutable(t, wrapper, script)
	open = func(show func() string) {
		// The open fails (ENXIO) until a call reads the FIFO; closing the
		// writer wakes that call, after the later ones were let through.
		var w *os.File
		tmuxtest.Eventually(t, callTimeout, "a tmux call reading the gate", func() bool {
			w, err = os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			return err == nil
		}, func() string { return fmt.Sprintf("%d calls began; %s", started(), show()) })
		if err := os.WriteFile(opened, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	t.Cleanup(func() {
		// Release a call still blocked if the test failed before open.
		if _, err := os.Stat(opened); err != nil {
			os.WriteFile(opened, nil, 0o600)
			if f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	})
	return wrapper, open, started
}

// On a socket the operator named, what tmux holds cannot change the tool
// selection, so the handshake and tools/list are answered while the one
// tmux call of start-up is still running: a client waits for neither. Tool
// calls wait for that call, and the startup line is printed once it
// returned.
func TestHandshakeDoesNotWaitForTmux(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	wrapper, open, started := gatedTmux(t, "")
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--tmux-bin", wrapper) // the handshake
	if tools := p.listTools(); len(tools) < 30 {
		t.Fatalf("tools/list listed %d tools while tmux was held: %v", len(tools), tools)
	}
	// The listing came back with the gate closed. The start-up call is on its way, held at the
	// gate (its wrapper may not have run its first line yet on a loaded machine: the listing
	// need not wait for that either); it is the only one.
	tmuxtest.Eventually(t, callTimeout, "the start-up tmux call reaching the gate", func() bool { return started() >= 1 },
		func() string { return p.stderr.String() })
	if n := started(); n != 1 {
		t.Errorf("%d tmux calls began while the first was held; want the one of start-up", n)
	}
	if strings.Contains(p.stderr.String(), " serving ") {
		t.Errorf("the startup line was printed before tmux answered:\n%s", p.stderr)
	}

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_server_info", Arguments: map[string]any{}})
		got <- answer{res, err}
	}()
	open(p.stderr.String)
	a := <-got
	if a.err != nil || a.res.IsError {
		t.Fatalf("get_server_info after start-up: %v %v\nstderr:\n%s", a.err, a.res, p.stderr)
	}
	if text := resultText(a.res); !strings.Contains(text, `"state":"existing"`) {
		t.Errorf("get_server_info: %s; want the existing server's provenance", text)
	}
	if line := p.startupLine(); !strings.Contains(line, "serving existing "+ts.Socket) {
		t.Errorf("startup line %q", line)
	}
}

// When the tmux call of start-up fails after the handshake was answered,
// the process ends with status 1 and tmux's error on stderr, as it does
// when it fails before: a tool call waiting for it gets the error.
func TestTmuxFailureAfterHandshakeEndsTheProcess(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	wrapper, open, _ := gatedTmux(t, "error connecting to the socket (Permission denied)")
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--tmux-bin", wrapper)
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			err = os.ErrInvalid
		}
		got <- err
	}()
	open(p.stderr.String)
	if err := <-got; err == os.ErrInvalid {
		t.Errorf("list_sessions succeeded though tmux could not be read")
	}
	p.waitExit(callTimeout)
	if status := p.exitStatus(); status != 1 {
		t.Errorf("exit status %d; want 1\nstderr:\n%s", status, p.stderr)
	}
	if s := p.stderr.String(); !strings.Contains(s, "Permission denied") || strings.Contains(s, " serving ") {
		t.Errorf("stderr should name tmux's error and print no startup line:\n%s", s)
	}
}

// A client that goes away while the tmux call of start-up is still running
// is a clean stop: status 0, and no error about the call left behind.
func TestStdinClosedBeforeTmuxAnswersIsCleanStop(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	wrapper, _, started := gatedTmux(t, "")
	p := start(t, cleanEnv(t, ts.Dir), "--socket", ts.Socket, "--tmux-bin", wrapper)
	tmuxtest.Eventually(t, callTimeout, "the tmux call of start-up", func() bool { return started() == 1 })
	if _, err := p.close(); err != nil {
		t.Errorf("exit after stdin EOF with tmux still held: %v; want status 0\nstderr:\n%s", err, p.stderr)
	}
	if s := p.stderr.String(); strings.Contains(s, "libtmux-mcp: ") {
		t.Errorf("stderr reports an error for a clean stop:\n%s", s)
	}
}
