// Package live shares tmux control-mode connections between waits, so a
// wait wakes when its pane prints instead of polling the screen.
//
// A Pool opens one connection per watched session, on the first watch of
// that session; every later watch of the session shares it; the connection
// closes once its last watch has ended and it stayed unwatched for the idle
// period. A watch gets a coalesced wake-up channel: a signal means "look
// again" (the pane printed, its window's layout changed, a window closed, or
// events were lost), never what changed: the waiter re-reads tmux. The pool
// does not decide when a wait is over. WatchOrTick gives a waiter a timer
// instead when there is no pool or no connection.
//
// A View is one pane's output as counted lines (Lines), fed from the
// connection's %output as it is read (never through a lossy channel), kept
// for a time its users choose. It does not capture the grid: what it says
// is what the pane printed since the view began.
package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// Conn is a control-mode connection; *tmux.Control is one.
type Conn interface {
	SubscribeNotices(buf int) (<-chan tmux.Event, func())
	Command(ctx context.Context, args ...string) (string, error)
	CommandList(ctx context.Context, mark func(out string), cmds ...[]string) (string, error)
	SubscribeFormat(ctx context.Context, name, what, format string) error
	Done() <-chan struct{}
	Close() error
}

// Dial opens a connection to session ($N) whose every %output (and
// %extended-output) goes to output from the first byte read, before the
// connection can be seen attached (see tmux.Client.ControlWithOutput).
type Dial func(ctx context.Context, session string, output func(pane string, data []byte)) (Conn, error)

// ErrClosed is returned by Watch after Close.
var ErrClosed = errors.New("live: the pool is closed (the server is shutting down)")

// eventBuffer is how many events a session's fan-out may fall behind by
// before events are dropped (and every watch woken to re-read).
const eventBuffer = 1024

// Pool is the set of shared connections. Its methods are safe for
// concurrent use.
type Pool struct {
	dial Dial
	idle time.Duration

	vmu   sync.RWMutex
	views map[string]*View // by pane id

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
	wg       sync.WaitGroup // fan-out goroutines

	outputWatches atomic.Int32 // watches woken by their pane's output
}

// New returns a pool that opens connections with dial and closes each
// after idle without watches.
func New(dial Dial, idle time.Duration) *Pool {
	return &Pool{dial: dial, idle: idle, sessions: map[string]*session{}, views: map[string]*View{}}
}

// session is one shared connection and its watches.
type session struct {
	id      string
	ready   chan struct{} // closed when the dial has finished
	conn    Conn          // set before ready closes; nil when the dial failed
	err     error
	watches map[*Watch]struct{}
	idle    *time.Timer // running while there are no watches
	gone    bool        // removed from the pool
}

// Watch is one waiter's registration for one pane.
type Watch struct {
	p      *Pool
	s      *session
	pane   string
	output bool // the pane's output wakes it
	wake   chan struct{}
	ended  chan struct{}
	once   sync.Once
}

// C receives a value (coalesced: at most one pending) whenever the pane
// may have changed: it printed, or an event that could concern it arrived.
func (w *Watch) C() <-chan struct{} { return w.wake }

// Command runs a tmux command over the watch's connection (a round trip
// instead of a new tmux process). Never send commands that wait inside
// tmux (wait-for): they hold up every other command on the connection.
func (w *Watch) Command(ctx context.Context, args ...string) (string, error) {
	return w.s.conn.Command(ctx, args...)
}

// Ended is closed when the connection ended (the session or server went
// away, or the pool closed): no further wake-ups will come.
func (w *Watch) Ended() <-chan struct{} { return w.ended }

// Watch registers for pane in session, opening the session's connection if
// none is open. With output, the pane's output wakes the watch; without,
// only changes that may end the pane do (layout changes, closed windows,
// the connection's end, lost events). ctx bounds only the dial.
func (p *Pool) Watch(ctx context.Context, sessionID, pane string, output bool) (*Watch, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	s := p.sessions[sessionID]
	dialer := false
	if s == nil {
		s = &session{id: sessionID, ready: make(chan struct{}), watches: map[*Watch]struct{}{}}
		p.sessions[sessionID] = s
		dialer = true
	}
	w := &Watch{p: p, s: s, pane: pane, output: output, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	s.watches[w] = struct{}{}
	if output {
		p.outputWatches.Add(1)
	}
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	p.mu.Unlock()

	if dialer {
		// The dial outlives this caller's ctx: other watches may share it.
		// Output is taken from the first byte: a view's hook is in place
		// before its connection can be seen, and must not miss a line
		// printed after that.
		conn, err := p.dial(context.WithoutCancel(ctx), sessionID, func(pane string, data []byte) {
			p.tap(pane, data)
			p.wakeOutput(s, pane)
		})
		p.mu.Lock()
		s.conn, s.err = conn, err
		if err != nil {
			p.drop(s)
		} else if p.closed {
			s.err = ErrClosed
			p.drop(s)
		} else {
			events, unsubscribe := conn.SubscribeNotices(eventBuffer)
			p.wg.Add(1)
			go p.fanOut(s, events, unsubscribe)
		}
		subscribe := s.err == nil
		close(s.ready)
		closeNow := s.err != nil && conn != nil
		p.mu.Unlock()
		if closeNow {
			conn.Close()
		}
		if subscribe {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), subscribeTimeout)
			if err := conn.SubscribeFormat(sctx, deadSubscription, "", deadFormat); err != nil {
				slog.Warn("live: no dead-pane subscription; a pane that dies without printing may not wake its waits", "session", sessionID, "err", err)
			}
			cancel()
		}
	}
	// An open connection wins over a ctx that ended meanwhile: a select
	// with both ready picks at random, and a short wait would then be
	// refused a connection that was there all along.
	select {
	case <-s.ready:
	default:
		select {
		case <-s.ready:
		case <-ctx.Done():
			w.Close()
			return nil, ctx.Err()
		}
	}
	if s.err != nil {
		w.Close()
		return nil, s.err
	}
	return w, nil
}

// A pane that dies but stays (remain-on-exit) prints nothing and changes no
// layout, and tmux 3.3a skips dead panes in pane subscriptions: a session
// subscription lists the session's dead panes instead (tmux re-expands it
// about once a second and reports changes).
const (
	deadSubscription = "ltmcp-dead"
	deadFormat       = "#{W:#{P:#{?pane_dead,#{pane_id} ,}}}"
	subscribeTimeout = 2 * time.Second
)

// Close ends the watch; the connection closes after the idle period when
// this was its last watch.
func (w *Watch) Close() {
	w.once.Do(func() {
		p := w.p
		p.mu.Lock()
		defer p.mu.Unlock()
		if w.output {
			p.outputWatches.Add(-1)
		}
		delete(w.s.watches, w)
		s := w.s
		if len(s.watches) == 0 && !s.gone && s.conn != nil {
			s.idle = time.AfterFunc(p.idle, func() { p.closeIdle(s) })
		}
	})
}

// closeIdle closes s if it is still unwatched.
func (p *Pool) closeIdle(s *session) {
	p.mu.Lock()
	if len(s.watches) > 0 || s.gone {
		p.mu.Unlock()
		return
	}
	p.drop(s)
	p.mu.Unlock()
	s.conn.Close()
}

// drop removes s from the pool and ends its watches. p.mu is held.
func (p *Pool) drop(s *session) {
	if s.gone {
		return
	}
	s.gone = true
	if p.sessions[s.id] == s {
		delete(p.sessions, s.id)
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	for w := range s.watches {
		close(w.ended)
		delete(s.watches, w)
	}
}

// wakeOutput wakes the watches of s that wait for pane's output. The
// connection's reader calls it for each block the pane prints, after the
// pane's view took the block: the output never goes through the fan-out's
// channel.
func (p *Pool) wakeOutput(s *session, pane string) {
	if p.outputWatches.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := range s.watches {
		if w.output && w.pane == pane {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
}

// fanOut wakes the watches of s for each event but the panes' output
// (wakeOutput), until the connection ends.
func (p *Pool) fanOut(s *session, events <-chan tmux.Event, unsubscribe func()) {
	defer p.wg.Done()
	defer unsubscribe()
	for ev := range events {
		p.mu.Lock()
		for w := range s.watches {
			if concerns(ev, w.pane, w.output) {
				select {
				case w.wake <- struct{}{}:
				default:
				}
			}
		}
		p.mu.Unlock()
	}
	// The connection ended on its own (or was closed).
	p.mu.Lock()
	p.drop(s)
	p.mu.Unlock()
}

// concerns reports whether ev may have changed whether pane exists, or
// (with output) what it shows.
func concerns(ev tmux.Event, pane string, output bool) bool {
	switch ev.Kind {
	case tmux.EventPaneModeChanged: // output comes by wakeOutput
		return output && ev.Pane == pane
	case tmux.EventSubscriptionChanged:
		return ev.Name == deadSubscription
	case tmux.EventLost, tmux.EventLayoutChange, tmux.EventWindowClose, tmux.EventUnlinkedWindowClose,
		tmux.EventExit, tmux.EventSessionChanged, tmux.EventSessionsChanged:
		return true
	}
	return false
}

// Sessions is how many connections are open or opening.
func (p *Pool) Sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

// Close closes every connection, ends every watch and waits for the
// connections' processes to be reaped. Later Watch calls fail.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	var conns []Conn
	for _, s := range p.sessions {
		if s.conn != nil {
			conns = append(conns, s.conn)
		}
		p.drop(s)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}
