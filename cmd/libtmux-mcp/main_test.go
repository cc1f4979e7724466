package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// binary is the built libtmux-mcp (see internal/testbin).
func binary(t *testing.T) string { return testbin.Build(t).Server }

// result is what one run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

// start runs the binary with args in a minimal environment (PATH, HOME and
// a private TMUX_TMPDIR plus env) and no stdin, and checks that no tmux
// server appeared in TMUX_TMPDIR.
func start(t *testing.T, args []string, env ...string) result {
	t.Helper()
	tmpdir := t.TempDir()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"TMUX_TMPDIR=" + tmpdir,
	}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run %q: %v", args, err)
	}
	entries, err := os.ReadDir(tmpdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("args %q env %q: TMUX_TMPDIR holds %s; no tmux server may start", args, env, entries[0].Name())
	}
	return result{code, stdout.String(), stderr.String()}
}

func TestStartupRefusals(t *testing.T) {
	t.Parallel()
	nine := []string{"--enable-tool", "tmux_run"}
	for i := range 9 {
		nine = append(nine, "--enroll-pane", fmt.Sprintf("%%%d=/tmp/libtmux-mcp-e%d", i, i))
	}
	tests := []struct {
		name string
		args []string
		env  []string
		want []string // the stderr line mentions each
	}{
		{"unknown flag", []string{"--bogus"}, nil, []string{"--bogus"}},
		{"positional argument", []string{"serve"}, nil, []string{`"serve"`}},
		{"relative tmux config", nil, []string{"LIBTMUX_TMUX_CONFIG=tmux.conf"}, []string{"LIBTMUX_TMUX_CONFIG", "tmux.conf", "absolute"}},
		{"both sockets", nil, []string{"LIBTMUX_SOCKET=x", "LIBTMUX_SOCKET_PATH=/tmp/x"}, []string{"LIBTMUX_SOCKET", "LIBTMUX_SOCKET_PATH"}},
		{"socket control char", nil, []string{"LIBTMUX_SOCKET_PATH=/tmp/a\x01b"}, []string{"LIBTMUX_SOCKET_PATH", "0x01"}},
		{"socket DEL", nil, []string{"LIBTMUX_SOCKET_PATH=/tmp/a\x7fb"}, []string{"LIBTMUX_SOCKET_PATH", "0x7f"}},
		{"retired safety", nil, []string{"LIBTMUX_SAFETY=readonly"}, []string{"LIBTMUX_SAFETY", "LIBTMUX_TOOLSETS=inspect"}},
		{"retired mcp tools", nil, []string{"LIBTMUX_MCP_TOOLS=x"}, []string{"LIBTMUX_MCP_TOOLS", "LIBTMUX_TOOLS"}},
		{"retired socket name", nil, []string{"LIBTMUX_SOCKET_NAME=x"}, []string{"LIBTMUX_SOCKET_NAME", "LIBTMUX_SOCKET"}},
		{"unknown toolset", []string{"--toolsets", "inspect,admin"}, nil, []string{`"admin"`, "teardown"}},
		{"empty list entry", nil, []string{"LIBTMUX_TOOLSETS=inspect,,manage"}, []string{"LIBTMUX_TOOLSETS", "empty entry"}},
		{"unknown tool", []string{"--enable-tool", "rm_rf"}, nil, []string{`"rm_rf"`, "capture_pane"}},
		{"wait ceiling", nil, []string{"LIBTMUX_MCP_WAIT_MAX_MS=120001"}, []string{"LIBTMUX_MCP_WAIT_MAX_MS", "120000"}},
		{"pane without tmux_run", []string{"--enroll-pane", "%1=/tmp/x"}, nil, []string{"--enroll-pane", "tmux_run"}},
		{"nine panes", nine, nil, []string{"9", "at most 8"}},
		{"http not loopback", []string{"--http", "0.0.0.0:8765"}, nil, []string{"--http", "loopback"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := start(t, tt.args, tt.env...)
			if r.code == 0 {
				t.Errorf("exit status 0; want a refusal")
			}
			if r.stdout != "" {
				t.Errorf("stdout %q; want nothing (stdout is for JSON-RPC)", r.stdout)
			}
			line, ok := strings.CutSuffix(r.stderr, "\n")
			if !ok || strings.Contains(line, "\n") || !strings.HasPrefix(line, "libtmux-mcp: ") {
				t.Fatalf("stderr %q; want exactly one line starting libtmux-mcp: ", r.stderr)
			}
			for _, s := range tt.want {
				if !strings.Contains(line, s) {
					t.Errorf("stderr %q; want it to mention %q", line, s)
				}
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	r := start(t, []string{"--version"})
	if r.code != 0 || r.stdout != "libtmux-mcp 0.1.0-dev\n" || r.stderr != "" {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want 0, %q, nothing", r.code, r.stdout, r.stderr, "libtmux-mcp 0.1.0-dev\n")
	}
	r = start(t, []string{"--help"})
	if r.code != 0 || !strings.Contains(r.stdout, "--socket PATH") || r.stderr != "" {
		t.Errorf("--help: exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", r.code, r.stdout, r.stderr)
	}
}
