// The control connection's reader: one goroutine reads tmux, answers
// commands, fans out notifications and, at EOF, records why it ended.

package tmux

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

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
