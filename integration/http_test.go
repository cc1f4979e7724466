package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPRefusesNonLoopback starts the binary with --http on addresses
// that are not loopback: each stops startup with status 2, one line on
// stderr and nothing on stdout, before tmux is contacted.
func TestHTTPRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	b := build(t)
	for _, addr := range []string{"0.0.0.0:8765", "[::]:8765", ":8765", "192.0.2.1:8765", "example.com:80"} {
		cmd := exec.Command(b.server, "--http", addr, "--socket", "/nonexistent/tmux-socket")
		cmd.Env = cleanEnv(t, shortTempDir(t))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("--http %s: %v; want exit status 2", addr, err)
		}
		if n := strings.Count(stderr.String(), "\n"); n != 1 || !strings.Contains(stderr.String(), "loopback") && !strings.Contains(stderr.String(), "HOST:PORT") {
			t.Errorf("--http %s: stderr has %d lines; want one naming the problem:\n%s", addr, n, &stderr)
		}
		if stdout.Len() > 0 {
			t.Errorf("--http %s: stdout carried %q", addr, &stdout)
		}
	}
}

var httpLine = regexp.MustCompile(`Streamable HTTP at (http://\S+); send Authorization: Bearer with token (\S+)`)

// TestHTTPServes serves a private tmux server over Streamable HTTP: a
// request without the token gets 401; go-sdk's streamable client with the
// token lists the tools and calls one; SIGTERM stops the process with 0.
func TestHTTPServes(t *testing.T) {
	t.Parallel()
	ts := tmuxServer(t)
	f := ampSession(t, ts)
	b := build(t)
	stderr := newSyncBuffer()
	cmd := exec.Command(b.server, "--http", "127.0.0.1:0", "--socket", ts.Socket)
	// TMUX and TMUX_PANE name the fixture pane: under HTTP there is no
	// caller pane all the same.
	info, err := ts.Client.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = cleanEnv(t, ts.Dir, fmt.Sprintf("TMUX=%s,%d,0", ts.Socket, info.PID), "TMUX_PANE="+f.paneID)
	cmd.Stderr = stderr
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })

	line, ok := stderr.line("Streamable HTTP at ", 30*time.Second)
	if !ok {
		t.Fatalf("no HTTP line on stderr:\n%s", stderr)
	}
	m := httpLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("the HTTP line %q does not give the URL and the token", line)
	}
	url, token := m[1], m[2]

	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without the token: status %d; want 401", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatalf("connect with the token: %v\nstderr:\n%s", err, stderr)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", err, tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_panes", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_panes: %v %v", err, res)
	}
	text := resultText(res)
	if !strings.Contains(text, f.paneID) || strings.Contains(text, `"caller":true`) {
		t.Errorf("list_panes over HTTP = %s; want %s listed and no caller pane", text, f.paneID)
	}
	cs.Close()

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; want 0\nstderr:\n%s", err, stderr)
		}
	case <-time.After(callTimeout):
		t.Fatalf("no exit after SIGTERM\nstderr:\n%s", stderr)
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout carried %q under --http", &stdout)
	}
}

// bearer adds the token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
