package broker

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/enroll"
)

// shell is an enrolled zsh's connection.
type shell struct {
	e       *enroll.Enrollment
	conn    *net.UnixConn
	r       interface{ ReadSlice(byte) ([]byte, error) }
	peer    peercred.Peer
	replies chan string // STARTED/BUSY/FAIL lines for the run in flight
	once    sync.Once
	done    chan struct{}
}

func (sh *shell) close() {
	sh.once.Do(func() {
		close(sh.done)
		sh.conn.Close()
	})
}

// readShell reads the shell's answers until it closes or says BYE.
func (b *Broker) readShell(sh *shell) {
	reason := "connection closed"
	defer func() { b.lose(sh, reason) }()
	for {
		line, err := sh.r.ReadSlice('\n')
		if err != nil {
			return
		}
		msg := strings.TrimSuffix(string(line), "\n")
		switch word, _, _ := strings.Cut(msg, " "); word {
		case WordStarted, WordBusy, WordFail:
			select {
			case sh.replies <- msg:
			default: // nobody waits: a late answer to an abandoned run
			}
		case WordBye:
			reason = "unenrolled"
			return
		case WordReady:
			// A fresh prompt after BUSY: nothing waits for it.
		default:
			b.cfg.Log.Warn("tmux_run shell said something unexpected", slog.String("pane", sh.e.Pane), slog.String("line", msg))
		}
	}
}

// watchShell marks the enrollment lost when the shell process exits. EOF
// on the connection is no proof: children inherit the socket.
// It owns the pidfd and closes it when done, so the fd is never closed
// while it is being polled.
func (b *Broker) watchShell(sh *shell) {
	defer sh.peer.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-sh.done
		cancel()
	}()
	if err := peercred.WaitExit(ctx, sh.peer.PidFD); err == nil {
		b.lose(sh, "shell exited")
	}
}

// lose marks sh's enrollment lost and closes its connection; the first
// call logs why. A connection can close before the shell's exit is seen,
// or the other way round.
func (b *Broker) lose(sh *shell, reason string) {
	if !sh.e.Lost() {
		b.cfg.Log.Info("tmux_run enrollment lost", slog.String("pane", sh.e.Pane), slog.String("reason", reason))
	}
	b.cfg.Registry.Lose(sh.e)
	b.mu.Lock()
	if b.shells[sh.e.Pane] == sh {
		delete(b.shells, sh.e.Pane)
	}
	b.mu.Unlock()
	sh.close()
}

// shellFor returns the live shell of pane.
func (b *Broker) shellFor(pane string) *shell {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.shells[pane]
}
