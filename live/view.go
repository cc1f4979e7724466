package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// viewBytes bounds the text a view keeps per pane.
const viewBytes = 16 << 20

// View is one pane's output as lines (see Lines), fed by every %output of
// the pane over its session's shared connection, from the moment the view
// was made until it ends. A view ends when its connection ends (the
// session or server went away, the pool closed) or when nobody held it
// and its keep time passed; a view that ended never starts again: a new
// View call makes a new one, with a new Epoch.
type View struct {
	p     *Pool
	pane  string
	epoch string
	w     *Watch        // holds the session's connection open; set before ready closes
	ready chan struct{} // closed once the dial finished (w set, or the view ended)
	ended chan struct{}

	mu      sync.Mutex
	lines   *Lines
	changed chan struct{} // closed and replaced when lines change
	users   int
	until   time.Time // kept at least until then
	timer   *time.Timer
	gone    bool
}

// View returns pane's view, making one (and opening the session's
// connection, if needed) when the pane has none. maxLines bounds the lines
// kept (the pane's history-limit is a good bound). The view is kept at
// least for keep from now (Keep); ctx bounds only the dial. first, when not
// nil, is called with the lines (locked) before anything else can see a
// new view's connection (for a hook that must not miss a line): a caller
// that sees the control client attached knows first has run. The view
// comes held (see Hold): call release when done with it.
func (p *Pool) View(ctx context.Context, sessionID, pane string, maxLines int, keep time.Duration, first func(l *Lines)) (v *View, release func(), made bool, err error) {
	for {
		p.vmu.Lock()
		if v := p.views[pane]; v != nil {
			p.vmu.Unlock()
			select {
			case <-v.ready:
			case <-ctx.Done():
				return nil, nil, false, ctx.Err()
			}
			release := v.Hold()
			if !v.Alive() {
				release()
				continue // it failed or ended meanwhile: make another
			}
			if first != nil {
				v.Read(first)
			}
			v.Keep(keep)
			return v, release, false, nil
		}
		nonce := make([]byte, 4)
		rand.Read(nonce)
		v = &View{p: p, pane: pane, epoch: hex.EncodeToString(nonce), ended: make(chan struct{}), ready: make(chan struct{}),
			lines: NewLines(maxLines, viewBytes), changed: make(chan struct{})}
		if first != nil {
			first(v.lines) // nobody else has v yet
		}
		p.views[pane] = v // before the dial: the tap feeds it from the first byte
		p.vmu.Unlock()
		release := v.Hold()
		w, err := p.Watch(ctx, sessionID, pane, true)
		if err != nil {
			v.end()
			close(v.ready)
			return nil, nil, false, err
		}
		v.w = w
		close(v.ready)
		v.Keep(keep)
		v.seed(ctx)
		go func() {
			<-w.Ended()
			v.end()
		}()
		return v, release, true, nil
	}
}

// seed gives a new view what the pane's cursor row shows as its unfinished
// line (a prompt, say), and whether the alternate screen is on, read in one
// command list: the lines then hold exactly the screen's state at that
// moment, and output read after it goes on from there. A seed that fails
// leaves the view as it is (its first line may then lack its start).
func (v *View) seed(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	defer cancel()
	v.w.s.conn.CommandList(sctx, func(out string) {
		head, rows, ok := strings.Cut(out, "\n")
		f := strings.Fields(head)
		if !ok || len(f) != 3 || f[0] != "ltmcp-seed" {
			return
		}
		x, y := atoi(f[1], -1), atoi(strings.TrimSuffix(f[2], "a"), -1)
		lines := strings.Split(rows, "\n")
		if x < 0 || y < 0 || y >= len(lines) {
			return
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		v.lines.Seed(lines[y], x, strings.HasSuffix(f[2], "a"))
	}, []string{"display-message", "-p", "-t", v.pane, "ltmcp-seed #{cursor_x} #{cursor_y}#{?alternate_on,a,}"},
		[]string{"capture-pane", "-p", "-t", v.pane, "-S", "0", "-E", "-"})
}

// Epoch names this view: a cursor made from one view means nothing to
// another.
func (v *View) Epoch() string { return v.epoch }

// Pane is the pane id.
func (v *View) Pane() string { return v.pane }

// Session is the session whose connection feeds the view. tmux sends a
// pane's output only to the clients of a session holding its window: a
// pane moved to another session stops feeding the view, so its users end
// it (End) when the pane's session is no longer this one.
func (v *View) Session() string { return v.w.s.id }

// End ends the view now.
func (v *View) End() { v.end() }

// Ended is closed when the view ended: no more lines will be counted.
func (v *View) Ended() <-chan struct{} { return v.ended }

// Alive reports whether the view has not ended.
func (v *View) Alive() bool {
	select {
	case <-v.ended:
		return false
	default:
		return true
	}
}

// Changed returns a channel closed at the next change of the view (output
// arrived) or at its end.
func (v *View) Changed() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// Wake is the view's watch channel: output, and events that may end the
// pane (see Watch.C).
func (v *View) Wake() <-chan struct{} { return v.w.C() }

// Read calls fn with the lines, locked: fn must not keep l.
func (v *View) Read(fn func(l *Lines)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fn(v.lines)
}

// Command runs one tmux command over the view's connection.
func (v *View) Command(ctx context.Context, args ...string) (string, error) {
	return v.w.s.conn.Command(ctx, args...)
}

// CommandList runs commands as one list over the view's connection; mark,
// when not nil, is called with the lines (locked) at the moment the list
// ran: they then hold exactly the output tmux had read before it.
func (v *View) CommandList(ctx context.Context, mark func(l *Lines), cmds ...[]string) (string, error) {
	var m func(string)
	if mark != nil {
		m = func(string) {
			v.mu.Lock()
			defer v.mu.Unlock()
			mark(v.lines)
		}
	}
	return v.w.s.conn.CommandList(ctx, m, cmds...)
}

// Keep keeps the view for at least d from now.
func (v *View) Keep(d time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t := time.Now().Add(d); t.After(v.until) {
		v.until = t
	}
	v.schedule()
}

// Hold keeps the view until release is called (and then for the keep time
// left).
func (v *View) Hold() (release func()) {
	v.mu.Lock()
	v.users++
	v.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			v.mu.Lock()
			defer v.mu.Unlock()
			v.users--
			v.schedule()
		})
	}
}

// schedule arms the timer that ends an unused view. v.mu is held.
func (v *View) schedule() {
	if v.gone || v.users > 0 {
		return
	}
	if v.timer != nil {
		v.timer.Stop()
	}
	v.timer = time.AfterFunc(max(time.Until(v.until), 0), func() {
		v.mu.Lock()
		idle := v.users == 0 && !time.Now().Before(v.until)
		v.mu.Unlock()
		if idle {
			v.end()
		}
	})
}

// end ends the view once: it stops counting, wakes its readers and lets
// its connection go.
func (v *View) end() {
	v.p.vmu.Lock()
	if v.p.views[v.pane] == v {
		delete(v.p.views, v.pane)
	}
	v.p.vmu.Unlock()
	v.mu.Lock()
	if v.gone {
		v.mu.Unlock()
		return
	}
	v.gone = true
	if v.timer != nil {
		v.timer.Stop()
	}
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
	close(v.ended)
	if v.w != nil {
		v.w.Close()
	}
}

// feed is the connection's output tap for this view.
func (v *View) feed(data []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.gone {
		return
	}
	v.lines.Feed(data)
	close(v.changed)
	v.changed = make(chan struct{})
}

// tap returns the output tap of a session's connection: it feeds the
// pane's view, when it has one.
func (p *Pool) tap(pane string, data []byte) {
	p.vmu.RLock()
	v := p.views[pane]
	p.vmu.RUnlock()
	if v != nil {
		v.feed(data)
	}
}

// openMaxLines bounds the lines a view made by Open keeps, whatever the
// pane's history-limit says.
const openMaxLines = 100000

// Open is View for a caller that knows the pane but not its session: a
// view the pool has is returned at once; a new one keeps as many lines as
// tmux would (the pane's history and screen, at most openMaxLines), read
// from pos, or when pos is nil from tmux through c (one tmux call).
func (p *Pool) Open(ctx context.Context, c *tmux.Client, pane string, keep time.Duration, first func(*Lines), pos *tmux.Position) (v *View, release func(), err error) {
	if v := p.Lookup(pane); v != nil {
		release := v.Hold()
		if v.Alive() {
			if first != nil {
				v.Read(first)
			}
			v.Keep(keep)
			return v, release, nil
		}
		release()
	}
	if pos == nil {
		got, err := c.CapturePosition(ctx, pane)
		if err != nil {
			return nil, nil, err
		}
		pos = &got
	}
	v, release, _, err = p.View(ctx, pos.SessionID, pane, min(pos.HistoryLimit+pos.Height, openMaxLines), keep, first)
	return v, release, err
}

// Lookup returns pane's view when it has one that has not ended.
func (p *Pool) Lookup(pane string) *View {
	p.vmu.RLock()
	v := p.views[pane]
	p.vmu.RUnlock()
	if v == nil {
		return nil
	}
	<-v.ready
	if !v.Alive() {
		return nil
	}
	return v
}

// Views is how many panes are viewed.
func (p *Pool) Views() int {
	p.vmu.RLock()
	defer p.vmu.RUnlock()
	return len(p.views)
}
