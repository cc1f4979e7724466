package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultTimeout bounds each tmux invocation when the client is given none.
const DefaultTimeout = 30 * time.Second

// Client runs tmux commands against one pinned server.
type Client struct {
	route   Route
	timeout time.Duration
	env     []string
	calls   *atomic.Int64
}

// NewClient returns a client for route. Each call is bounded by timeout
// (DefaultTimeout when zero or negative). The route must be valid.
func NewClient(route Route, timeout time.Duration) (*Client, error) {
	if err := route.Validate(); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{route: route, timeout: timeout, env: utf8Environ(os.Environ()), calls: new(atomic.Int64)}, nil
}

// Without returns a client like c whose tmux processes do not get the named environment
// variables. A tmux server started by a call copies the environment of that call into its global
// environment, and so into every pane and every process started there: a secret must never
// reach it.
func (c *Client) Without(names ...string) *Client {
	d := *c
	d.env = make([]string, 0, len(c.env))
	for _, kv := range c.env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			d.env = append(d.env, kv)
		}
	}
	return &d
}

// Route is the route this client is pinned to.
func (c *Client) Route() Route { return c.route }

// Calls counts the tmux processes this client has started.
func (c *Client) Calls() int64 { return c.calls.Load() }

// Error is a failed tmux invocation. It carries the argument vector and what
// tmux wrote to stderr, so the reader can tell what was asked and why it
// failed.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("tmux %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoServer is matched (with errors.Is) by errors that say no server runs
// on the socket.
var ErrNoServer = errors.New("no tmux server is running on this socket")

// ErrNotFound is matched (with errors.Is) by errors that say the target
// (a session, window, pane or client) does not exist.
var ErrNotFound = errors.New("no such tmux target")

// Is lets errors.Is(err, ErrNoServer) and errors.Is(err, ErrNotFound)
// recognise tmux's own wording, so callers never match stderr text.
func (e *Error) Is(target error) bool {
	s := e.Stderr
	switch target {
	case ErrNoServer:
		return strings.Contains(s, "no server running") ||
			strings.Contains(s, "error connecting to") ||
			strings.Contains(s, "server exited unexpectedly")
	case ErrNotFound:
		// set-option and show-options say "no such session: $9".
		return strings.Contains(s, "can't find") || strings.Contains(s, "no such session") ||
			strings.Contains(s, "no such window") || strings.Contains(s, "no such pane")
	}
	return false
}

// Run runs tmux with args and returns its stdout. The socket flags are added
// here; args must not select another socket.
func (c *Client) Run(ctx context.Context, args ...string) (string, error) {
	out, err := c.run(ctx, c.timeout, nil, args)
	return string(out), err
}

// RunFor is Run with its own deadline instead of the client's command
// timeout, for commands that block by design (wait-for) for as long as the
// caller's wait allows.
func (c *Client) RunFor(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	out, err := c.run(ctx, timeout, nil, args)
	return string(out), err
}

// RunConfig runs tmux with -f config before args; tmux reads the file only
// when this invocation starts the server.
func (c *Client) RunConfig(ctx context.Context, config string, args ...string) (string, error) {
	out, err := c.run(ctx, c.timeout, []string{"-f", config}, args)
	return string(out), err
}

// run is the one place a tmux process starts: the socket is pinned, the
// locale is UTF-8, stderr is kept apart for the error, and the deadline
// ends it (TERM, then KILL after a grace).
func (c *Client) run(ctx context.Context, timeout time.Duration, pre, args []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append(append([]string{"-u"}, c.route.socketArgs()...), pre...), args...)
	cmd := exec.CommandContext(ctx, c.route.bin(), argv...)
	cmd.Env = c.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A tmux client that ignores SIGTERM is killed after a short grace so a
	// deadline always returns.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	c.calls.Add(1)
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (tmux did not answer within %s)", ctx.Err(), timeout)
		}
		return stdout.Bytes(), &Error{Args: argv, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// utf8Environ returns env with a UTF-8 character type. Without one tmux 3.3a
// rewrites tabs and non-ASCII bytes in its -F output. The first of LC_ALL,
// LC_CTYPE and LANG that is set decides, as in tmux itself.
func utf8Environ(env []string) []string {
	get := func(k string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v, ok := get(k); ok && v != "" {
			if isUTF8Locale(v) {
				return env
			}
			break
		}
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LC_ALL=") && !strings.HasPrefix(kv, "LC_CTYPE=") {
			out = append(out, kv)
		}
	}
	return append(out, "LC_CTYPE=C.UTF-8")
}

func isUTF8Locale(v string) bool {
	v = strings.ToLower(v)
	return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
}
