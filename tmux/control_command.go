// Commands over a control connection: each is written with a sentinel,
// and its %begin/%end blocks are filed under it in order (see control.go).

package tmux

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Command sends one tmux command (args are quoted for tmux's parser, so each
// arrives as one argument, spaces, quotes, # and ; included) and returns its
// output, one "\n"-terminated line per line tmux printed. An %error answer is
// a *Error with tmux's message in Stderr. ctx bounds the wait; a command
// given up on stays queued in tmux and its answer is discarded. Each command also has the
// client's own deadline (Client timeout): when tmux does not answer within it, the connection
// is closed (every wait on it ends, and a pool opens a new one) and the error is a
// *NoAnswerError; what was queued may still run if tmux resumes.
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
	if len(cmds) == 0 {
		return "", errors.New("no tmux command given")
	}
	line, err := CommandListText(cmds...)
	if err != nil {
		return "", err
	}
	var args []string
	for i, c := range cmds {
		if i > 0 {
			args = append(args, ";")
		}
		args = append(args, c...)
	}
	p := &pendingCommand{args: args, mark: mark, ncmds: len(cmds), reply: make(chan commandReply, 1)}
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, cc.client.timeout)
	defer cancel()

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
		if ctx.Err() != nil && caller.Err() == nil {
			cc.kill()
			werr = &NoAnswerError{Within: cc.client.timeout, Control: true}
		} else if ctx.Err() != nil {
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
		if caller.Err() == nil {
			// tmux is stopped or stuck: end the connection so nothing waits on it for ever.
			cc.kill()
			return "", cc.commandError(args, &NoAnswerError{Within: cc.client.timeout, Control: true})
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
