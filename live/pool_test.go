package live

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// fakeConn is a control connection the test feeds events into. Its event
// channel is unbuffered: a send returns once the fan-out has taken the
// event, and the fan-out takes an event only after delivering the one
// before it to every watch.
type fakeConn struct {
	mu     sync.Mutex
	subs   map[string]string
	events chan tmux.Event
	done   chan struct{}
	once   sync.Once
	closed atomic.Bool
	tap    func(pane string, data []byte)
	answer func(cmds [][]string) string // CommandList's output, when set
}

func newFake() *fakeConn {
	return &fakeConn{events: make(chan tmux.Event), done: make(chan struct{}), subs: map[string]string{}}
}

// sync returns once every event sent before has reached its watches: the
// fan-out has taken an event that concerns no watch after them.
func (f *fakeConn) sync(t *testing.T) {
	t.Helper()
	select {
	case f.events <- tmux.Event{Kind: tmux.EventSubscriptionChanged, Name: "test-sync"}:
	case <-time.After(10 * time.Second):
		t.Fatal("the fan-out took no event for 10 s")
	}
}

func (f *fakeConn) SubscribeNotices(int) (<-chan tmux.Event, func()) { return f.events, func() {} }
func (f *fakeConn) Done() <-chan struct{}                            { return f.done }
func (f *fakeConn) SubscribeFormat(_ context.Context, name, what, format string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if format == "" {
		delete(f.subs, name)
	} else {
		f.subs[name] = what + " " + format
	}
	return nil
}

func (f *fakeConn) subscriptions() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, v := range f.subs {
		out[k] = v
	}
	return out
}

func (f *fakeConn) Command(_ context.Context, args ...string) (string, error) {
	return "ran " + args[0] + "\n", nil
}

func (f *fakeConn) CommandList(_ context.Context, mark func(string), cmds ...[]string) (string, error) {
	out := "ran " + cmds[0][0] + "\n"
	if f.answer != nil {
		out = f.answer(cmds)
	}
	if mark != nil {
		mark(out)
	}
	return out, nil
}

// output feeds data as the pane's %output, as the reader would.
func (f *fakeConn) output(pane, data string) {
	f.mu.Lock()
	tap := f.tap
	f.mu.Unlock()
	if tap != nil {
		tap(pane, []byte(data))
	}
}

// Close ends the connection as tmux would: the event channel closes.
func (f *fakeConn) Close() error {
	f.once.Do(func() { f.closed.Store(true); close(f.events); close(f.done) })
	return nil
}

type fakeDialer struct {
	mu    sync.Mutex
	dials map[string]int
	conns map[string]*fakeConn
	fail  error
	gate  chan struct{} // when set, dials wait for it
	// attaching is %1's output tmux sends as a dial attaches, before the
	// dial returns.
	attaching string
}

func (d *fakeDialer) dial(ctx context.Context, session string, output func(pane string, data []byte)) (Conn, error) {
	if d.gate != nil {
		<-d.gate
	}
	d.mu.Lock()
	if d.fail != nil {
		d.mu.Unlock()
		return nil, d.fail
	}
	if d.dials == nil {
		d.dials, d.conns = map[string]int{}, map[string]*fakeConn{}
	}
	d.dials[session]++
	c := newFake()
	c.tap = output
	d.conns[session] = c
	d.mu.Unlock()
	if d.attaching != "" {
		c.output("%1", d.attaching)
	}
	return c, nil
}

func (d *fakeDialer) conn(session string) *fakeConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[session]
}

// woken reports whether the events sent to c so far left w a wake-up,
// and takes it.
func woken(t *testing.T, c *fakeConn, w *Watch) bool {
	t.Helper()
	c.sync(t)
	select {
	case <-w.C():
		return true
	default:
		return false
	}
}

// quiet reports whether the events sent to c so far left w no wake-up.
func quiet(t *testing.T, c *fakeConn, w *Watch) bool {
	t.Helper()
	return !woken(t, c, w)
}

func TestPoolSharesOneConnectionPerSession(t *testing.T) {
	d := &fakeDialer{gate: make(chan struct{})}
	p := New(d.dial, time.Hour)
	defer p.Close()
	var wg sync.WaitGroup
	watches := make([]*Watch, 10)
	for i := range watches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := p.Watch(context.Background(), "$1", "%1", true)
			if err != nil {
				t.Error(err)
			}
			watches[i] = w
		}()
	}
	close(d.gate) // every watch is waiting for the one dial
	wg.Wait()
	if d.dials["$1"] != 1 {
		t.Fatalf("%d dials for one session; want 1", d.dials["$1"])
	}
	other, _ := p.Watch(context.Background(), "$1", "%2", true)
	if out, err := other.Command(context.Background(), "list-panes"); err != nil || out != "ran list-panes\n" {
		t.Errorf("Command over the shared connection: %q, %v", out, err)
	}
	c := d.conn("$1")
	c.output("%1", "x")
	for i, w := range watches {
		if !woken(t, c, w) {
			t.Errorf("watch %d of %%1 not woken by its output", i)
		}
	}
	if !quiet(t, c, other) {
		t.Error("a watch of %2 was woken by %1's output")
	}
	// Many events, one pending wake-up: the channel coalesces.
	for i := 0; i < 5; i++ {
		c.output("%2", "y")
	}
	if !woken(t, c, other) {
		t.Fatal("no wake-up for %2")
	}
	if !quiet(t, c, other) {
		t.Error("five outputs left more than one wake-up pending")
	}
	// A watch for the pane's end only is not woken by its output.
	ends, _ := p.Watch(context.Background(), "$1", "%2", false)
	c.output("%2", "z")
	if !woken(t, c, other) || !quiet(t, c, ends) {
		t.Error("output woke a watch that asked only for the pane's end")
	}
	c.events <- tmux.Event{Kind: tmux.EventLayoutChange, Window: "@1"}
	if !woken(t, c, ends) {
		t.Error("a layout change did not wake a watch for the pane's end")
	}
	// A pane that dies and stays is reported through the session's
	// subscription of its dead panes, which wakes every watch.
	if got := c.subscriptions(); got[deadSubscription] != " "+deadFormat {
		t.Errorf("subscriptions %v; want the session's dead panes", got)
	}
	c.sync(t) // the layout change has reached every watch
	for _, w := range append(watches, ends, other) {
		select { // drain wake-ups already delivered
		case <-w.C():
		default:
		}
	}
	c.events <- tmux.Event{Kind: tmux.EventSubscriptionChanged, Name: deadSubscription, Session: "$1", Value: "%2 "}
	if !woken(t, c, ends) || !woken(t, c, watches[0]) {
		t.Error("the dead-panes subscription did not wake every watch")
	}
	c.events <- tmux.Event{Kind: tmux.EventSubscriptionChanged, Name: "someone-else", Session: "$1"}
	if !quiet(t, c, ends) {
		t.Error("another subscription woke a watch")
	}
	// A layout change or lost events may concern every pane.
	c.events <- tmux.Event{Kind: tmux.EventLost, Lost: 3}
	if !woken(t, c, watches[0]) || !woken(t, c, watches[9]) {
		t.Error("EventLost did not wake every watch")
	}
}

func TestPoolClosesIdleAndReopens(t *testing.T) {
	d := &fakeDialer{}
	p := New(d.dial, 20*time.Millisecond)
	defer p.Close()
	w, _ := p.Watch(context.Background(), "$1", "%1", true)
	w.Close()
	c := d.conn("$1")
	tmuxtest.Eventually(t, 2*time.Second, "the idle connection closing", c.closed.Load)
	w2, err := p.Watch(context.Background(), "$1", "%1", true)
	if err != nil || d.dials["$1"] != 2 {
		t.Fatalf("watch after idle close: %v, %d dials; want a new connection", err, d.dials["$1"])
	}
	// A watch arriving within the idle period keeps the connection: it
	// stops the idle timer, and a timer that fired meanwhile finds a watch
	// and leaves the connection open.
	w2.Close()
	w3, err := p.Watch(context.Background(), "$1", "%1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Close()
	p.mu.Lock()
	s := p.sessions["$1"]
	running := s.idle != nil
	p.mu.Unlock()
	if running {
		t.Error("the idle timer still runs while the connection is watched")
	}
	p.closeIdle(s) // as the timer would, had it fired just before the watch
	if d.conn("$1").closed.Load() {
		t.Error("a watched connection was closed as idle")
	}
}

func TestPoolConnectionEndEndsWatches(t *testing.T) {
	d := &fakeDialer{}
	p := New(d.dial, time.Hour)
	defer p.Close()
	w, _ := p.Watch(context.Background(), "$1", "%1", true)
	d.conn("$1").Close() // tmux ended it: session or server gone
	select {
	case <-w.Ended():
	case <-time.After(2 * time.Second):
		t.Fatal("Ended not closed when the connection ended")
	}
	if p.Sessions() != 0 {
		t.Errorf("%d sessions after the connection ended; want 0", p.Sessions())
	}
}

func TestPoolDialFailureAndClose(t *testing.T) {
	d := &fakeDialer{fail: errors.New("no session $9")}
	p := New(d.dial, time.Hour)
	if _, err := p.Watch(context.Background(), "$9", "%1", true); err == nil || p.Sessions() != 0 {
		t.Fatalf("failed dial: err %v, %d sessions; want the error and nothing kept", err, p.Sessions())
	}
	d.fail = nil
	w, _ := p.Watch(context.Background(), "$1", "%1", true)
	p.Close()
	select {
	case <-w.Ended():
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end the watch")
	}
	if !d.conn("$1").closed.Load() {
		t.Error("Close left a connection open")
	}
	if _, err := p.Watch(context.Background(), "$1", "%1", true); !errors.Is(err, ErrClosed) {
		t.Errorf("Watch after Close: %v; want ErrClosed", err)
	}
	w.Close() // after Close: no panic
}

func TestPoolWatchGivesUpWithItsContext(t *testing.T) {
	d := &fakeDialer{gate: make(chan struct{})}
	p := New(d.dial, time.Hour)
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := p.Watch(ctx, "$1", "%1", true); done <- err }()
	// A second watch joins the same dial.
	joined := make(chan error, 1)
	go func() { _, err := p.Watch(context.Background(), "$1", "%1", true); joined <- err }()
	cancel()
	close(d.gate)
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled watch: %v", err)
	}
	if err := <-joined; err != nil {
		t.Errorf("the other watch of the dial: %v; want it to get the connection", err)
	}
}

// TestPoolOpenConnectionBeatsEndedContext: a wait as short as 1 ms may
// have used up its context by the time it registers; an open connection
// is still handed over (never refused at random).
func TestPoolOpenConnectionBeatsEndedContext(t *testing.T) {
	d := &fakeDialer{}
	p := New(d.dial, time.Hour)
	defer p.Close()
	first, err := p.Watch(context.Background(), "$1", "%1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		w, err := p.Watch(ended, "$1", "%1", true)
		if err != nil {
			t.Fatalf("watch %d with an ended context on an open connection: %v", i, err)
		}
		w.Close()
	}
}
