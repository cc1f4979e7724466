// Control-mode client.
//
// A Control is one `tmux -C attach-session` process talking over pipes (not
// -CC, which needs a terminal). It carries tmux commands (one round trip is
// about a tenth of a millisecond, against several milliseconds for a new tmux
// process) and notifications (%output for every pane of the attached session,
// window and session changes, format subscriptions).
//
// What attaching does, visibly: a control client is a client. It counts in
// #{session_attached}, it fires the client-attached hook (and
// client-detached when it ends), and it shows in list-clients; tell it apart
// with #{client_control_mode}. What it does not do: it never changes window
// sizes (it attaches with -f ignore-size), never copies this process's
// environment into the session (-E, so update-environment is not applied),
// never starts a tmux server (-N), and never selects a window or pane (a pane
// or window target is resolved to its session first, because attach-session
// -t %3 would make %3 the active pane for everyone).
//
// Commands are answered in order. Each Command writes its line and a
// sentinel line; every %begin/%end block with flags 1 up to the sentinel's
// is the command's answer, so commands that queue more commands (if-shell
// -F) still match. Blocks with flags 0 (the attach itself, hooks) are not
// ours and are ignored. A command that waits inside tmux (wait-for, run-shell
// without -b, if-shell without -F, confirm-before) holds up every later
// command on the connection: do not send those here.

package tmux

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrControlClosed is the error of a control connection ended by Close.
var ErrControlClosed = errors.New("tmux control connection closed")

const (
	// controlMaxLine bounds one protocol line; a longer one ends the
	// connection with an error rather than growing without limit.
	controlMaxLine = 16 << 20
	// controlGrace is how long Close waits for tmux to detach after stdin
	// closes before it sends SIGTERM; controlKillDelay is how long after
	// SIGTERM before SIGKILL (exec.Cmd.WaitDelay).
	controlGrace     = 500 * time.Millisecond
	controlKillDelay = 1 * time.Second
	// controlProbeTimeout bounds the tmux call that asks, after the
	// connection ended on its own, whether the server or the session is gone.
	controlProbeTimeout = 2 * time.Second
)

// Control is a control-mode connection to one session. Its methods are safe
// for concurrent use.
type Control struct {
	client    *Client
	session   string // $N of the attached session
	argv      []string
	cmd       *exec.Cmd
	stdin     *os.File
	stdout    *os.File
	stderr    *headBuffer
	nonce     string
	kill      context.CancelFunc // ends the process: SIGTERM, then SIGKILL
	probe     context.Context    // cancelled by Close, bounds the death probe
	stopProbe context.CancelFunc

	wmu sync.Mutex // serializes writes; held while queueing so order matches
	seq uint64     // under wmu

	qmu   sync.Mutex
	queue []*pendingCommand // awaiting their sentinel, in write order
	dead  error             // set once the reader ended; under qmu
	cut   error             // a write that reached tmux only in part; under qmu

	smu        sync.Mutex
	subs       map[*subscriber]struct{}
	subsClosed bool
	outputSubs atomic.Int32 // subscribers that take the panes' output

	tap atomic.Pointer[func(pane string, data []byte)]

	attached chan error // the reader's verdict on the attach, sent once
	closing  atomic.Bool
	done     chan struct{}
	err      error // why it ended; written before done closes
}

type pendingCommand struct {
	args   []string
	mark   func(out string) // called by the reader when the list's last block ends
	ncmds  int              // commands in the list
	blocks int
	token  string
	out    strings.Builder
	errOut strings.Builder
	failed bool
	reply  chan commandReply // buffered: the reader never blocks on it
}

type commandReply struct {
	out string
	err error
}

// Control starts a control client attached to target: a session id ($1),
// a session name (=name), or a pane or window id (%3, @2), whose session is
// looked up first with one tmux call. ctx bounds the attach only; the
// connection lasts until Close, or until tmux ends it (Done, Err).
func (c *Client) Control(ctx context.Context, target string) (*Control, error) {
	return c.ControlWithOutput(ctx, target, nil)
}

// ControlWithOutput is Control with output as OnOutput's function from the
// first byte read. Others see the client attached (list-clients) before
// Control returns, and tmux sends a pane's output from that moment: a
// function set by OnOutput after Control returned would miss what came in
// between.
func (c *Client) ControlWithOutput(ctx context.Context, target string, output func(pane string, data []byte)) (*Control, error) {
	session := target
	switch {
	case ValidSessionID(target):
	case strings.HasPrefix(target, "=") && len(target) > 1:
		if err := CheckPrintable("session name", target); err != nil {
			return nil, err
		}
		// "=s:1" would attach to window 1 and make it current for everyone;
		// tmux never puts ':' or '.' in a session name anyway.
		if strings.ContainsAny(target, ":.") {
			return nil, fmt.Errorf("session name %q contains ':' or '.', which tmux session names never do", target[1:])
		}
	case ValidPaneID(target), ValidWindowID(target):
		out, err := c.Run(ctx, "display-message", "-p", "-t", target, "#{session_id}")
		if err != nil {
			return nil, err
		}
		// display-message does not fail on a missing target: it prints "".
		session = strings.TrimSpace(out)
		if session == "" {
			return nil, fmt.Errorf("no pane or window %s on this server: %w", target, ErrNotFound)
		}
		if !ValidSessionID(session) {
			return nil, fmt.Errorf("tmux named %q as the session of %s; expected an id like $1", session, target)
		}
	default:
		return nil, fmt.Errorf("control target %q is not a session id ($1), =name, pane id (%%3) or window id (@2)", target)
	}

	nonce := make([]byte, 8)
	rand.Read(nonce)
	cc := &Control{
		client:   c,
		stderr:   &headBuffer{max: 4096},
		nonce:    "ltmcp-" + hex.EncodeToString(nonce),
		subs:     map[*subscriber]struct{}{},
		attached: make(chan error, 1),
		done:     make(chan struct{}),
	}
	if output != nil {
		cc.tap.Store(&output)
	}
	cc.argv = append(append([]string{"-u", "-N"}, c.route.socketArgs()...),
		"-C", "attach-session", "-E", "-f", "ignore-size", "-t", session)

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	// The process lives until Close or its own end, not until ctx is done.
	life, kill := context.WithCancel(context.WithoutCancel(ctx))
	cmd := exec.CommandContext(life, c.route.bin(), cc.argv...)
	cmd.Env = c.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, cc.stderr
	// tmux detaches when its stdin closes; SIGTERM is for a client that did
	// not, and WaitDelay's SIGKILL for one that ignores SIGTERM too.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = controlKillDelay
	endsWithThisProcess(cmd)
	c.calls.Add(1)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		kill()
		inW.Close()
		outR.Close()
		return nil, &Error{Args: cc.argv, Err: err}
	}
	cc.cmd, cc.stdin, cc.stdout, cc.kill = cmd, inW, outR, kill
	cc.probe, cc.stopProbe = context.WithCancel(context.Background())
	go cc.read()

	select {
	case err := <-cc.attached:
		if err != nil {
			cc.Close()
			return nil, err
		}
		return cc, nil
	case <-ctx.Done():
		cc.Close()
		return nil, &Error{Args: cc.argv, Err: fmt.Errorf("%w (tmux did not attach the control client)", ctx.Err())}
	}
}

// Session is the id ($N) of the session attached at the start. If that
// session is destroyed while detach-on-destroy is off, tmux moves the client
// to another session: watch for EventSessionChanged.
func (cc *Control) Session() string { return cc.session }

// Done is closed when the connection has ended and its process was reaped.
func (cc *Control) Done() <-chan struct{} { return cc.done }

// Err says why the connection ended: ErrControlClosed after Close, an error
// matching ErrNoServer when the server went away, otherwise tmux's %exit
// reason and what a check of the session found. It is nil while the
// connection is up.
func (cc *Control) Err() error {
	select {
	case <-cc.done:
		return cc.err
	default:
		return nil
	}
}

// Close detaches the client: it closes tmux's stdin, sends SIGTERM if tmux
// has not exited within half a second and SIGKILL a second later. It
// returns once the process is reaped and the reader goroutine has finished.
// Pending and later commands fail with ErrControlClosed. Close is safe to
// call more than once.
func (cc *Control) Close() error {
	if !cc.closing.Swap(true) {
		cc.stopProbe()
		// Safe during a concurrent write: os.File serializes Close with it.
		cc.stdin.Close()
	}
	t := time.NewTimer(controlGrace)
	defer t.Stop()
	select {
	case <-cc.done:
	case <-t.C:
		cc.kill()
		<-cc.done
	}
	return nil
}
