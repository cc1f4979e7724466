package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// killGrace is how long a tmux client has to exit after SIGTERM at its
// deadline before it is killed; ioGrace bounds the reading of its output
// once it has exited (or been killed), in case a descendant holds a pipe.
const (
	killGrace = 50 * time.Millisecond
	ioGrace   = 2 * time.Second
)

// heldDescriptors says what holds this process's descriptors; descriptors_linux.go fills it,
// and elsewhere it stays nil.
var heldDescriptors func() string

// fdLimit describes this process's open-file limit, and what holds its descriptors where that
// can be read.
func fdLimit() string {
	var lim syscall.Rlimit
	msg := "the process is out of file descriptors"
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		msg = fmt.Sprintf("the process has reached its limit of %d open files", lim.Cur)
	}
	if heldDescriptors != nil {
		if held := heldDescriptors(); held != "" {
			msg += ": " + held
		}
	}
	return msg
}

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

// NoAnswerError says that tmux did not answer a command within the client's own deadline
// (not the caller's): a stopped or overloaded server. It wraps context.DeadlineExceeded.
type NoAnswerError struct {
	Within  time.Duration
	Control bool // over a control connection, which was then closed
}

func (e *NoAnswerError) Error() string {
	msg := fmt.Sprintf("tmux did not answer within %s: the tmux server may be stopped (a suspended job, SIGSTOP) or overloaded; check that it answers (tmux list-sessions in a terminal), then call again", e.Within)
	if e.Control {
		msg += "; the control connection that waited was closed (a command already sent on it may still run if tmux resumes), and the next call opens a new one"
	}
	return msg
}

func (e *NoAnswerError) Unwrap() error { return context.DeadlineExceeded }

// InWords returns the *NoAnswerError in err's chain alone, which says what happened and what to
// check without the command line, the socket or Go's error text; any other err as it is.
func InWords(err error) error {
	if na := (*NoAnswerError)(nil); errors.As(err, &na) {
		return na
	}
	return err
}

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
// ends it (TERM, then KILL after killGrace).
//
// The output is read through pipes of our own rather than os/exec's: a
// tmux client hands its stdout and stderr to the server, so a server that
// does not answer keeps them open after the client is gone, and only
// abandoning the pipes lets the deadline hold. os/exec's WaitDelay would
// abandon them at the same delay after a normal exit too, where reading
// the output can take longer under load.
func (c *Client) run(ctx context.Context, timeout time.Duration, pre, args []string) ([]byte, error) {
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append(append([]string{"-u"}, c.route.socketArgs()...), pre...), args...)
	fail := func(stdout, stderr []byte, err error) ([]byte, error) {
		switch {
		case ctx.Err() != nil && caller.Err() == nil:
			err = &NoAnswerError{Within: timeout}
		case ctx.Err() != nil:
			// The caller's context ended (cancelled, or its own deadline):
			// not the client's deadline, which may be far off.
			err = fmt.Errorf("%w before tmux answered", ctx.Err())
		}
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			err = fmt.Errorf("%w (%s); finish or cancel some waits and runs, or raise the limit (ulimit -n) before starting libtmux-mcp", err, fdLimit())
		}
		return stdout, &Error{Args: argv, Stderr: string(stderr), Err: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(nil, nil, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return fail(nil, nil, err)
	}
	cmd := exec.CommandContext(ctx, c.route.bin(), argv...)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = outW, errW
	// TERM at the deadline; a client still there killGrace later is stuck
	// on a server that does not answer (a stopped server: its client
	// ignores TERM until the server replies) and has nothing to flush.
	cmd.Cancel = func() error {
		time.AfterFunc(killGrace, func() { cmd.Process.Kill() })
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	c.calls.Add(1)
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return fail(nil, nil, err)
	}
	var stdout, stderr bytes.Buffer
	read := make(chan struct{}, 2)
	go func() { io.Copy(&stdout, outR); read <- struct{}{} }()
	go func() { io.Copy(&stderr, errR); read <- struct{}{} }()
	err = cmd.Wait()
	grace := ioGrace
	if ctx.Err() != nil {
		grace = killGrace
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for pending := 2; pending > 0; pending-- {
		select {
		case <-read:
		case <-timer.C:
			// Still held open (by the server, or a descendant): stop
			// reading what is left.
			outR.Close()
			errR.Close()
			<-read
		}
	}
	outR.Close()
	errR.Close()
	if err != nil {
		return fail(stdout.Bytes(), stderr.Bytes(), err)
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
