package tmux

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseTMUX(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ClientEnv
		ok   bool
		why  string
	}{
		{"/tmp/tmux-0/default,1234,0", ClientEnv{"/tmp/tmux-0/default", 1234, 0}, true, "the usual value"},
		{"/tmp/a,b/sock,77,3", ClientEnv{"/tmp/a,b/sock", 77, 3}, true, "a comma in the socket path stays in the path"},
		{"/tmp/a b/sock,77,3", ClientEnv{"/tmp/a b/sock", 77, 3}, true, "spaces are kept"},
		{"", ClientEnv{}, false, "not inside tmux"},
		{"/tmp/s,77", ClientEnv{}, false, "the session number is missing"},
		{",77,3", ClientEnv{}, false, "no socket"},
		{"/tmp/s,x,3", ClientEnv{}, false, "the pid is not a number"},
		{"/tmp/s,0,3", ClientEnv{}, false, "pid 0 is no server"},
	} {
		got, ok := ParseTMUX(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseTMUX(%q) = %+v, %v; want %+v, %v (%s)", tc.in, got, ok, tc.want, tc.ok, tc.why)
		}
	}
}

func TestGuardCommand(t *testing.T) {
	args, err := GuardCommand("%3", 42, "@libtmux_mcp_run", "run-1", "abc")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, "|")
	want := "if-shell|-F|-t|%3|#{&&:#{==:#{pane_pid},42},#{!=:#{pane_dead},1}}|set -p -t %3 @libtmux_mcp_run run-1 ; display -p OK-abc|display -p NO-abc"
	if got != want {
		t.Errorf("GuardCommand = %q; want %q", got, want)
	}
	for _, bad := range []struct{ pane, value, why string }{
		{"3", "run", "a pane id needs its %"},
		{"%3", "run 1", "a space would split the tmux command"},
		{"%3", "run;x", "a semicolon would start another command"},
		{"%3", "", "an empty value"},
	} {
		if _, err := GuardCommand(bad.pane, 1, "@o", bad.value, "n"); err == nil {
			t.Errorf("GuardCommand(%q, %q) accepted: %s", bad.pane, bad.value, bad.why)
		}
	}
}

func TestErrorSentinels(t *testing.T) {
	for _, tc := range []struct {
		stderr           string
		noServer, notFnd bool
	}{
		{"no server running on /tmp/x", true, false},
		{"error connecting to /tmp/x (No such file or directory)", true, false},
		{"can't find pane: %9", false, true},
		{"can't find session: $9", false, true},
		{"no such session: $9", false, true}, // set-option, show-options
		{"no such window: @9", false, true},
		{"invalid option: nosuch", false, false},
		{"unknown command: foo", false, false},
	} {
		err := error(&Error{Args: []string{"x"}, Stderr: tc.stderr, Err: errors.New("exit status 1")})
		if errors.Is(err, ErrNoServer) != tc.noServer || errors.Is(err, ErrNotFound) != tc.notFnd {
			t.Errorf("%q: ErrNoServer %v, ErrNotFound %v; want %v, %v", tc.stderr, errors.Is(err, ErrNoServer), errors.Is(err, ErrNotFound), tc.noServer, tc.notFnd)
		}
	}
}

// A call whose context is cancelled says so, not that tmux missed the
// client's deadline (30 s away).
func TestRunCancelledSaysCancelled(t *testing.T) {
	c := silentTmux(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Run(ctx, "list-sessions")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "context deadline exceeded before tmux answered") || strings.Contains(err.Error(), "within") {
		t.Errorf("Run with its caller's context ended = %v; want that context's error, before tmux answered, and no client deadline named", err)
	}
}

func TestRunForHasItsOwnDeadline(t *testing.T) {
	// A per-call deadline shorter than the client's ends the call: a
	// stand-in tmux that never answers.
	c := silentTmux(t)
	_, err := c.RunFor(context.Background(), 50*time.Millisecond, "wait-for", "x")
	if err == nil || !strings.Contains(err.Error(), "did not answer within 50ms") {
		t.Errorf("RunFor past its deadline = %v; want a deadline error naming 50ms", err)
	}
}

// Without drops exactly the named variables from every tmux process the client starts, and
// leaves the client it came from as it was.
func TestClientWithout(t *testing.T) {
	c := &Client{env: []string{"A=1", "SECRET=x", "SECRET_NOT=y", "B=SECRET=z"}}
	d := c.Without("SECRET")
	if want := []string{"A=1", "SECRET_NOT=y", "B=SECRET=z"}; !slices.Equal(d.env, want) {
		t.Errorf("Without(SECRET).env = %q; want %q", d.env, want)
	}
	if len(c.env) != 4 {
		t.Errorf("the original client's environment changed: %q", c.env)
	}
}

// silentTmux is a client whose tmux is a stand-in that never answers.
func silentTmux(t *testing.T) *Client {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tmux")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 10\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(Route{Bin: bin, SocketPath: "/nonexistent/s"}, DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
