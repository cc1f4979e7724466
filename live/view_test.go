package live

import (
	"context"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

func TestViewCountsItsPaneOnly(t *testing.T) {
	d := &fakeDialer{}
	p := New(d.dial, 10*time.Millisecond)
	defer p.Close()
	v, rel, made, err := p.View(context.Background(), "$1", "%1", 100, time.Hour, nil)
	if err != nil || !made {
		t.Fatalf("View: %v, made %v", err, made)
	}
	again, rel2, made, err := p.View(context.Background(), "$1", "%1", 100, time.Hour, nil)
	if err != nil || made || again != v {
		t.Fatalf("a second View of the pane made another (%v, %v)", made, err)
	}
	rel()
	rel2()
	changed := v.Changed()
	c := d.conn("$1")
	c.output("%2", "other\n")
	c.output("%1", "a\r\nb")
	c.output("%1", "\r\n")
	select {
	case <-changed:
	case <-time.After(2 * time.Second):
		t.Fatal("output did not signal Changed")
	}
	var got []string
	v.Read(func(l *Lines) { got = l.Get(1, l.Newest()) })
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("lines %q; want [a b]", got)
	}
	var at uint64
	if _, err := v.CommandList(context.Background(), func(l *Lines) { at = l.Newest() }, []string{"display-message"}); err != nil || at != 2 {
		t.Errorf("mark saw %d lines (%v); want 2", at, err)
	}
}

// Output tmux sends as the connection attaches, before the dial returns,
// is counted: whoever saw the control client attached (list-clients) and
// then printed must find the line.
func TestViewCountsOutputSentWhileAttaching(t *testing.T) {
	d := &fakeDialer{attaching: "needle\r\n"}
	p := New(d.dial, time.Hour)
	defer p.Close()
	var hooked []string
	v, rel, _, err := p.View(context.Background(), "$1", "%1", 100, time.Hour, func(l *Lines) {
		l.OnLine(func(_ uint64, line string) { hooked = append(hooked, line) })
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rel()
	var got []string
	v.Read(func(l *Lines) { got = l.Get(1, l.Newest()) })
	if len(got) != 1 || got[0] != "needle" || len(hooked) != 1 {
		t.Errorf("lines %q, hook saw %q; want [needle] in both", got, hooked)
	}
}

func TestViewEndsAfterItsKeepTimeUnlessHeld(t *testing.T) {
	d := &fakeDialer{}
	p := New(d.dial, 10*time.Millisecond)
	defer p.Close()
	v, release, _, err := p.View(context.Background(), "$1", "%1", 100, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-v.Ended():
		t.Fatal("a held view ended")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	select {
	case <-v.Ended():
	case <-time.After(2 * time.Second):
		t.Fatal("the view never ended after its keep time")
	}
	// Its connection closes after the pool's idle time, and a new view is new.
	tmuxtest.Eventually(t, 2*time.Second, "the idle connection closing", func() bool { return p.Sessions() == 0 })
	if p.Sessions() != 0 || p.Views() != 0 {
		t.Fatalf("sessions %d views %d after the view ended; want 0 0", p.Sessions(), p.Views())
	}
	w, _, made, err := p.View(context.Background(), "$1", "%1", 100, time.Hour, nil)
	if err != nil || !made || w.Epoch() == v.Epoch() {
		t.Errorf("a view after the end: made %v, epoch %s (old %s), %v", made, w.Epoch(), v.Epoch(), err)
	}
}

func TestViewEndsWithItsConnection(t *testing.T) {
	d := &fakeDialer{}
	p := New(d.dial, time.Hour)
	defer p.Close()
	v, _, _, err := p.View(context.Background(), "$1", "%1", 100, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.conn("$1").Close()
	select {
	case <-v.Ended():
	case <-time.After(2 * time.Second):
		t.Fatal("the view outlived its connection")
	}
	if v.Alive() {
		t.Error("Alive after the end")
	}
}

// TestOpenReadsNoPositionForAViewItHas: Open makes a view from the
// position it is given, and returns a view the pool has without asking
// tmux (a nil client would fail if it did).
func TestOpenReadsNoPositionForAViewItHas(t *testing.T) {
	d := &fakeDialer{}
	p := New(d.dial, time.Hour)
	defer p.Close()
	pos := &tmux.Position{SessionID: "$1", HistoryLimit: 2000, Height: 24}
	v, rel, err := p.Open(context.Background(), nil, "%1", time.Hour, nil, pos)
	if err != nil {
		t.Fatalf("Open with a position: %v", err)
	}
	rel()
	again, rel, err := p.Open(context.Background(), nil, "%1", time.Hour, nil, nil)
	if err != nil || again != v {
		t.Fatalf("Open of a viewed pane = %p, %v; want the view it has, %p", again, err, v)
	}
	rel()
}
