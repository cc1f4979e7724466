package broker

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/broker/privfile"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/helper/job"
)

// shell is an enrolled zsh: its identity, the connection of the prompt it shows (if any), its
// resident helper (once a run started one) and its liveness FIFO.
type shell struct {
	e    *enroll.Enrollment
	peer peercred.Peer // its pidfd is owned by watchShell
	tty  int           // the controlling terminal at enrollment (/proc stat field 7)
	// image is the shell's stack start at enrollment (/proc stat field 28): another value
	// later means it exec'd, whatever still holds its liveness FIFO. 0 when unknown.
	image uint64

	mu       sync.Mutex
	prompt   *prompt       // the connection of the prompt now shown; nil while a command runs
	newest   uint64        // the accept number of the newest prompt connection attached
	attached chan struct{} // closed (and replaced) whenever a prompt connection attaches
	helper   *resident     // the resident helper; nil until a run starts one
	running  bool          // a run is using helper
	live     int           // read end of the liveness FIFO, -1 once closed or when there is none
	livePath string        // the FIFO, removed when it is closed
	lost     bool

	once sync.Once
	done chan struct{} // closed when the enrollment ends
}

// prompt is one prompt's connection: the shell opens it in precmd (or keeps the HELLO
// connection) and closes it in preexec, so the person's commands never inherit it.
type prompt struct {
	conn    *net.UnixConn
	r       *bufio.Reader
	replies chan reply    // GO, BUSY, FAIL and ERR lines (a GO's state comes apart: STATE)
	gone    chan struct{} // closed when the connection ends
}

// reply is one answer from the shell. For STATE, dir and env are the shell's $PWD and exported
// environment at the moment it agreed to a run.
type reply struct {
	word, id string
	fields   []string
	dir      string
	env      []string
}

func newPrompt(conn *net.UnixConn, r *bufio.Reader) *prompt {
	return &prompt{conn: conn, r: r, replies: make(chan reply, 8), gone: make(chan struct{})}
}

// attachOutcome is what shell.attach did with a prompt connection.
type attachOutcome int

const (
	attachDone  attachOutcome = iota // it is the prompt connection now
	attachLost                       // the enrollment has ended
	attachStale                      // a newer connection attached before it: the shell has closed it since
)

// attach makes p, the n-th connection the broker accepted, the shell's prompt connection; a
// previous one is closed. A connection accepted before the newest one attached is not taken:
// the shell opens a prompt's connection only after closing the one before, so an older one is
// closed already.
func (sh *shell) attach(p *prompt, n uint64) attachOutcome {
	sh.mu.Lock()
	if sh.lost {
		sh.mu.Unlock()
		return attachLost
	}
	if n < sh.newest {
		sh.mu.Unlock()
		return attachStale
	}
	sh.newest = n
	old := sh.prompt
	sh.prompt = p
	close(sh.attached)
	sh.attached = make(chan struct{})
	sh.mu.Unlock()
	if old != nil {
		old.conn.Close()
	}
	return attachDone
}

// promptOrWait returns the prompt connection, or the channel that closes when one attaches.
func (sh *shell) promptOrWait() (*prompt, <-chan struct{}) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.prompt, sh.attached
}

// detach forgets p if it is still the prompt connection.
func (sh *shell) detach(p *prompt) {
	sh.mu.Lock()
	if sh.prompt == p {
		sh.prompt = nil
	}
	sh.mu.Unlock()
}

// liveHungup reports whether the liveness FIFO shows the shell gone: it exec'd or exited (its
// copy is close-on-exec), and nothing else holds the FIFO.
func (sh *shell) liveHungup() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.live >= 0 && privfile.Hungup(sh.live)
}

// readPrompt reads the shell's answers on one prompt connection until it ends: preexec closed
// it (a command runs), the shell exited, or the broker closed it.
func (b *Broker) readPrompt(sh *shell, p *prompt) {
	defer func() {
		sh.detach(p)
		p.conn.Close()
		close(p.gone)
	}()
	for {
		line, err := readLine(p.r)
		if err != nil {
			b.logForeign(err, sh.e.Pane)
			return
		}
		rep, verdict := parseReply(line)
		switch verdict {
		case replyBadGo:
			// A GO with more fields is how answers looked when they carried the shell's state
			// on this connection, where another process holding it could write one (as root,
			// with credentials naming the shell): the connection is dropped.
			b.cfg.Log.Warn("tmux_run shell sent a malformed GO; the prompt's connection is dropped", slog.String("pane", sh.e.Pane), slog.String("line", line))
			return
		case replyUnknown:
			b.cfg.Log.Warn("tmux_run shell said something unexpected", slog.String("pane", sh.e.Pane), slog.String("line", line))
			continue
		}
		select {
		case p.replies <- rep:
		default: // nobody waits: a late answer to an abandoned run
		}
	}
}

// What parseReply made of a line.
const (
	replyOK      = iota // an answer
	replyBadGo          // a GO with other fields than its run id: the connection is dropped
	replyUnknown        // not an answer: the line is ignored
)

// parseReply reads one line the shell sent on a prompt connection (without its \n).
func parseReply(line string) (rep reply, verdict int) {
	f := strings.Split(line, " ")
	rep = reply{word: f[0], fields: f}
	if len(f) > 1 {
		rep.id = f[1]
	}
	switch f[0] {
	case WordGo:
		if len(f) != 2 || f[1] == "" {
			return rep, replyBadGo
		}
		return rep, replyOK
	case WordBusy, WordFail, WordErr:
		return rep, replyOK
	}
	return rep, replyUnknown
}

// watchShell marks the enrollment lost when the shell process exits. EOF on a connection is no
// proof: children may hold it. It owns the pidfd and closes it when done, so the fd is never
// closed while it is being polled.
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

// watchLive marks the enrollment lost when the liveness FIFO hangs up: the shell closed it by
// exec'ing (`exec zsh` keeps the pid but loses the handler) or by exiting. It closes the FIFO
// when done.
func (b *Broker) watchLive(sh *shell) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-sh.done
		cancel()
	}()
	sh.mu.Lock()
	fd := sh.live
	sh.mu.Unlock()
	if err := privfile.WaitHangup(ctx, fd); err == nil {
		b.lose(sh, "the shell exec'd another program or exited")
	}
	sh.mu.Lock()
	privfile.CloseFD(fd)
	sh.live = -1
	sh.mu.Unlock()
	os.Remove(sh.livePath)
}

// lose marks sh's enrollment lost and lets go of the shell; the first call logs why. A
// connection can close before the shell's exit is seen, or the other way round. A helper that
// is running a script finishes it first: the run reports its real completion.
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
	b.mark(sh.e.Pane)
}

// close ends the shell's connections; its helper too unless a run is using it (the run closes
// it when it ends).
func (sh *shell) close() {
	sh.once.Do(func() {
		sh.mu.Lock()
		sh.lost = true
		p, h := sh.prompt, sh.helper
		sh.prompt = nil
		if sh.running {
			h = nil
		}
		sh.mu.Unlock()
		close(sh.done)
		if p != nil {
			p.conn.Close()
		}
		if h != nil {
			h.close()
		}
	})
}

// shellFor returns the live shell of pane.
func (b *Broker) shellFor(pane string) *shell {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.shells[pane]
}

// shellRegisters bounds awaitShell: what hello does between the registry's accepting an
// enrollment and its shell's joining shells (a stat and a FIFO) takes well under a millisecond,
// unless the machine is loaded.
const shellRegisters = 2 * time.Second

// awaitShell returns pane's shell once it is enrollment e's. The registry says a pane is
// enrolled as soon as it accepts the shell's HELLO, a moment before hello puts the shell in
// shells: a run asked in that moment (right after list_panes showed the pane enrolled) would
// otherwise be told the shell closed its connection. It returns what shells holds for the pane
// when e is lost, ctx ends or shellRegisters passes.
func (b *Broker) awaitShell(ctx context.Context, pane string, e *enroll.Enrollment) *shell {
	timer := time.NewTimer(shellRegisters)
	defer timer.Stop()
	for {
		b.mu.Lock()
		sh, set := b.shells[pane], b.shellSet
		b.mu.Unlock()
		if (sh != nil && sh.e == e) || e.Lost() {
			return sh
		}
		select {
		case <-set:
		case <-timer.C:
			return sh
		case <-ctx.Done():
			return sh
		}
	}
}

// shellByID returns the live shell enrolled as id.
func (b *Broker) shellByID(id string) *shell {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, sh := range b.shells {
		if sh.e.ID == id {
			return sh
		}
	}
	return nil
}

// resident is a helper that stays for its enrollment and runs one job after another.
type resident struct {
	conn    *net.UnixConn
	records chan job.Record
	dead    chan struct{} // closed when reading ends; err says why
	err     error
	quit    chan struct{}
	once    sync.Once
	attrs   peercred.Attrs // the shell's limits and niceness when it started the helper
}

// newResident starts reading a new helper's records; gone is called if the helper ends by
// itself (not by close).
func newResident(sc *spawnConn, attrs peercred.Attrs, gone func(error)) *resident {
	h := &resident{conn: sc.conn, records: make(chan job.Record), dead: make(chan struct{}), quit: make(chan struct{}), attrs: attrs}
	go func() {
		defer close(h.dead)
		for {
			rec, err := job.ReadRecord(sc.r)
			if err != nil {
				h.err = err
				select {
				case <-h.quit:
				default:
					gone(err)
				}
				return
			}
			select {
			case h.records <- rec:
			case <-h.quit:
				h.err = net.ErrClosed
				return
			}
		}
	}()
	return h
}

// close ends the helper: it sees EOF, stops a script it runs, and exits.
func (h *resident) close() {
	h.once.Do(func() {
		close(h.quit)
		h.conn.Close()
	})
}

// alive reports whether the helper still holds its end: a helper killed between runs is seen
// here at once, before its reader has noticed, so the run starts a new one instead of failing.
func (h *resident) alive() bool {
	select {
	case <-h.dead:
		return false
	default:
		return !peercred.PeerGone(h.conn)
	}
}

// useHelper returns the shell's helper if it is alive and marks it in use, or nil.
func (sh *shell) useHelper() *resident {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.helper != nil && !sh.helper.alive() {
		sh.helper.close()
		sh.helper = nil
	}
	return sh.helper
}

// setHelper makes h the shell's helper, replacing (and closing) another. The run that started
// it uses it next, and closes it when it ends if the shell is lost by then.
func (sh *shell) setHelper(h *resident) {
	sh.mu.Lock()
	old := sh.helper
	sh.helper = h
	sh.mu.Unlock()
	if old != nil && old != h {
		old.close()
	}
}

// dropHelper closes h and forgets it if it is still the shell's helper.
func (sh *shell) dropHelper(h *resident) {
	sh.mu.Lock()
	if sh.helper == h {
		sh.helper = nil
	}
	sh.mu.Unlock()
	h.close()
}

// setRunning marks whether a run uses the helper. When a run ends on a lost shell, its helper is
// closed.
func (sh *shell) setRunning(on bool) {
	sh.mu.Lock()
	sh.running = on
	var h *resident
	if !on && sh.lost {
		h = sh.helper
	}
	sh.mu.Unlock()
	if h != nil {
		h.close()
	}
}

// execd reports whether the enrolled process, as st reads it now, has exec'd since it enrolled
// (`exec bash`, or `exec zsh` while a background job keeps the liveness FIFO open).
func (sh *shell) execd(st peercred.Stat) bool {
	return sh.image != 0 && st.StartStack != 0 && st.StartStack != sh.image
}

// foregroundJob reports whether the shell's terminal has another process group in the
// foreground: a command it started runs there, so it cannot be at its prompt.
func (sh *shell) foregroundJob() bool {
	st, err := peercred.ReadStat(sh.e.PID)
	return err == nil && st.TPGID > 0 && st.TPGID != st.PGRP
}
