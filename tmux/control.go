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
	"bufio"
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
			return nil, fmt.Errorf("no pane or window %s on this server; list_panes shows what exists", target)
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

// Command sends one tmux command (args are quoted for tmux's parser, so each
// arrives as one argument, spaces, quotes, # and ; included) and returns its
// output, one "\n"-terminated line per line tmux printed. An %error answer is
// a *Error with tmux's message in Stderr. ctx bounds the wait; a command
// given up on stays queued in tmux and its answer is discarded.
func (cc *Control) Command(ctx context.Context, args ...string) (string, error) {
	return cc.CommandList(ctx, nil, args)
}

// CommandList sends commands as one command list (one line: tmux runs them
// in one queue step, with no pane output read in between) and returns
// their output together. mark, when not nil, is called by the reader
// goroutine with the list's output as its last command's block ends: every
// %output that tmux had read before the list ran has then been delivered
// (to OnOutput), and none read after it. It is not called when a command of
// the list failed (tmux skips the rest). mark must be quick.
func (cc *Control) CommandList(ctx context.Context, mark func(out string), cmds ...[]string) (string, error) {
	var parts []string
	var args []string
	for i, c := range cmds {
		line, err := commandLine(c)
		if err != nil {
			return "", err
		}
		parts = append(parts, line)
		if i > 0 {
			args = append(args, ";")
		}
		args = append(args, c...)
	}
	if len(parts) == 0 {
		return "", errors.New("no tmux command given")
	}
	line := strings.Join(parts, " ; ")
	p := &pendingCommand{args: args, mark: mark, ncmds: len(cmds), reply: make(chan commandReply, 1)}

	cc.wmu.Lock()
	cc.qmu.Lock()
	if cc.dead != nil || cc.closing.Load() {
		err := cc.dead
		cc.qmu.Unlock()
		cc.wmu.Unlock()
		if err == nil {
			err = ErrControlClosed
		}
		return "", cc.commandError(args, err)
	}
	cc.seq++
	p.token = fmt.Sprintf("%s-%d", cc.nonce, cc.seq)
	cc.queue = append(cc.queue, p)
	cc.qmu.Unlock()
	// The sentinel is a separate line, so a failing command, which makes tmux
	// skip the rest of its own line, cannot take the sentinel with it.
	deadline, _ := ctx.Deadline()
	cc.stdin.SetWriteDeadline(deadline)
	n, werr := cc.stdin.WriteString(line + "\ndisplay-message -p " + p.token + "\n")
	if werr != nil && n == 0 {
		// Nothing reached tmux: take the command back (it is the newest).
		cc.qmu.Lock()
		if k := len(cc.queue) - 1; k >= 0 && cc.queue[k] == p {
			cc.queue = cc.queue[:k]
		}
		cc.qmu.Unlock()
		cc.wmu.Unlock()
		if ctx.Err() != nil {
			werr = fmt.Errorf("%w (tmux did not take the command)", ctx.Err())
		} else if err := cc.Err(); err != nil {
			werr = err
		} else if cc.closing.Load() {
			werr = ErrControlClosed
		}
		return "", cc.commandError(args, werr)
	}
	cc.wmu.Unlock()
	if werr != nil {
		// Part of the line reached tmux and would spoil the next command:
		// end the connection; the reader fails this command with the reason.
		cc.qmu.Lock()
		if cc.cut == nil {
			cc.cut = werr
		}
		cc.qmu.Unlock()
		cc.kill()
	}

	select {
	case r := <-p.reply:
		return r.out, r.err
	case <-ctx.Done():
		select { // an answer already here wins over a ctx that just ended
		case r := <-p.reply:
			return r.out, r.err
		default:
		}
		return "", cc.commandError(args, fmt.Errorf("%w (no answer over the tmux control connection)", ctx.Err()))
	}
}

func (cc *Control) commandError(args []string, err error) error {
	return &Error{Args: args, Err: err}
}

// OnOutput makes the reader goroutine call fn with every %output (and
// %extended-output) as it is read, before subscribers see it, and in
// order; unlike a subscription it never drops one. fn must be quick and
// must not call back into cc. A later call replaces fn; nil removes it.
func (cc *Control) OnOutput(fn func(pane string, data []byte)) {
	if fn == nil {
		cc.tap.Store(nil)
		return
	}
	cc.tap.Store(&fn)
}

// NoOutput stops %output notifications for this client (refresh-client -f
// no-output); other notifications keep coming.
func (cc *Control) NoOutput(ctx context.Context) error {
	_, err := cc.Command(ctx, "refresh-client", "-f", "no-output")
	return err
}

// SubscribeFormat asks tmux to report format whenever its value changes,
// as EventSubscriptionChanged events named name (refresh-client -B). what
// is "" for the session, "%*" or "@*" for every pane or window, or one id
// (%3, @2). tmux checks subscriptions about once a second. An empty format
// removes the subscription.
func (cc *Control) SubscribeFormat(ctx context.Context, name, what, format string) error {
	if name == "" || strings.ContainsAny(name, ": ") {
		return fmt.Errorf("subscription name %q must be non-empty, without ':' or spaces", name)
	}
	spec := name
	if format != "" {
		spec = name + ":" + what + ":" + format
	}
	_, err := cc.Command(ctx, "refresh-client", "-B", spec)
	return err
}

// read is the one goroutine that reads tmux: it answers commands, fans out
// notifications, and on EOF reaps the process and records why it ended.
func (cc *Control) read() {
	sc := bufio.NewScanner(cc.stdout)
	sc.Buffer(make([]byte, 0, 64<<10), controlMaxLine)
	var (
		inBlock   bool
		guard     string
		mine      bool
		lines     []string
		attached  bool
		attachErr string
		exit      *Event
		protoErr  error
	)
	for sc.Scan() {
		line := sc.Bytes()
		if inBlock {
			end, failed := isBlockEnd(line, guard)
			if !end {
				lines = append(lines, string(line))
				continue
			}
			inBlock = false
			if mine {
				cc.answer(lines, failed)
			} else if failed && !attached {
				attachErr = strings.Join(lines, "\n")
			}
			lines = lines[:0]
			continue
		}
		l, err := parseControlLine(line)
		if err != nil {
			protoErr = err
			break
		}
		switch l.kind {
		case lineBegin:
			inBlock, guard, mine = true, l.guard, l.mine
		case lineNotify:
			ev := l.event
			if ev.Kind == EventOutput || ev.Kind == EventExtendedOutput {
				if tap := cc.tap.Load(); tap != nil {
					(*tap)(ev.Pane, ev.Data)
				}
			}
			if !attached && ev.Kind == EventSessionChanged {
				attached = true
				cc.session = ev.Session
				cc.attached <- nil
			}
			if ev.Kind == EventExit {
				exit = &ev
			}
			cc.publish(ev)
		}
	}
	if protoErr == nil {
		protoErr = sc.Err()
	}
	if protoErr != nil {
		cc.kill() // tmux may still be writing; nobody reads any more
	}
	waitErr := cc.cmd.Wait()
	cc.kill() // releases the context
	cc.stdout.Close()

	var err error
	switch {
	case !attached:
		msg := attachErr
		if msg == "" {
			msg = cc.stderr.String()
		}
		if msg == "" && exit != nil {
			// A server that dies while the client connects: tmux -C says
			// so on stdout only, as "%exit server exited unexpectedly".
			msg = exit.Reason
		}
		if waitErr == nil {
			waitErr = errors.New("tmux exited before attaching")
		}
		err = &Error{Args: cc.argv, Stderr: msg, Err: waitErr}
		cc.attached <- err
	case cc.closing.Load():
		err = ErrControlClosed
	case cc.cutErr() != nil:
		err = fmt.Errorf("tmux control connection to %s ended: a command line was cut off while being written: %w", cc.session, cc.cutErr())
	case protoErr != nil:
		err = fmt.Errorf("tmux control connection to %s: %w", cc.session, protoErr)
	default:
		err = cc.why(exit)
	}
	cc.err = err

	cc.qmu.Lock()
	cc.dead = err
	queue := cc.queue
	cc.queue = nil
	cc.qmu.Unlock()
	for _, p := range queue {
		p.reply <- commandReply{err: cc.commandError(p.args, err)}
	}
	cc.smu.Lock()
	cc.subsClosed = true
	for s := range cc.subs {
		close(s.ch)
		delete(cc.subs, s)
	}
	cc.smu.Unlock()
	cc.stopProbe()
	close(cc.done)
}

func (cc *Control) cutErr() error {
	cc.qmu.Lock()
	defer cc.qmu.Unlock()
	return cc.cut
}

// why explains an end that nobody asked for: tmux's %exit reason, and
// whether the server or the session is gone (one tmux call).
func (cc *Control) why(exit *Event) error {
	said := "without %exit"
	if exit != nil {
		said = "with %exit"
		if exit.Reason != "" {
			said += " " + exit.Reason
		}
	}
	ctx, cancel := context.WithTimeout(cc.probe, controlProbeTimeout)
	defer cancel()
	_, err := cc.client.Run(ctx, "has-session", "-t", cc.session)
	switch {
	case errors.Is(err, ErrNoServer):
		return fmt.Errorf("tmux control connection to %s ended %s: %w", cc.session, said, ErrNoServer)
	case err != nil && cc.probe.Err() == nil && ctx.Err() == nil:
		return fmt.Errorf("tmux control connection to %s ended %s: session %s no longer exists", cc.session, said, cc.session)
	case err != nil:
		return fmt.Errorf("tmux control connection to %s ended %s", cc.session, said)
	}
	return fmt.Errorf("tmux control connection to %s ended %s; the session still exists (detached by someone?)", cc.session, said)
}

// answer files a finished flags-1 block under the oldest pending command:
// the block carrying only its sentinel token completes it, any other adds
// output or an error.
func (cc *Control) answer(lines []string, failed bool) {
	cc.qmu.Lock()
	defer cc.qmu.Unlock()
	if len(cc.queue) == 0 {
		return // not ours after all; nothing is waiting
	}
	p := cc.queue[0]
	if !failed && len(lines) == 1 && lines[0] == p.token {
		cc.queue[0] = nil
		cc.queue = cc.queue[1:]
		r := commandReply{out: p.out.String()}
		if p.failed {
			r.err = &Error{Args: p.args, Stderr: p.errOut.String(), Err: errors.New("tmux answered %error")}
		}
		p.reply <- r
		return
	}
	w := &p.out
	if failed {
		p.failed = true
		w = &p.errOut
	}
	for _, l := range lines {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	if p.blocks++; p.blocks == p.ncmds && !p.failed && p.mark != nil {
		p.mark(p.out.String())
	}
}

// subscriber is one consumer of events. Its channel has one slot more than
// asked for, kept for the EventLost marker.
type subscriber struct {
	ch   chan Event
	size int
	lost int // dropped since the last marker was queued; under smu
}

// Subscribe returns a channel of every notification, in tmux's order, and a
// function that ends the subscription (closing the channel). The channel is
// closed when the connection ends. The reader never waits for a consumer:
// when buf events are queued, later ones are dropped and one EventLost
// marker (with the count) is queued behind them, so a consumer that falls
// behind always learns it, and re-reads what it needs from tmux.
func (cc *Control) Subscribe(buf int) (<-chan Event, func()) {
	if buf < 1 {
		buf = 1
	}
	s := &subscriber{ch: make(chan Event, buf+1), size: buf}
	cc.smu.Lock()
	if cc.subsClosed {
		close(s.ch)
	} else {
		cc.subs[s] = struct{}{}
	}
	cc.smu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			cc.smu.Lock()
			defer cc.smu.Unlock()
			if _, ok := cc.subs[s]; ok {
				delete(cc.subs, s)
				close(s.ch)
			}
		})
	}
}

// publish hands ev to every subscriber without blocking. Only the reader
// sends, so a length check followed by a send cannot block.
func (cc *Control) publish(ev Event) {
	cc.smu.Lock()
	defer cc.smu.Unlock()
	for s := range cc.subs {
		switch n := len(s.ch); {
		case n < s.size:
			s.ch <- ev
		case n == s.size:
			// The spare slot is free: queue the marker. Every dropped event
			// is followed in the channel by a marker not yet read.
			s.lost++
			s.ch <- Event{Kind: EventLost, Lost: s.lost}
			s.lost = 0
		default:
			s.lost++
		}
	}
}

// headBuffer keeps the first max bytes written to it (tmux's stderr).
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *headBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *headBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
