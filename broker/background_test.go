package broker

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/spool"
)

// finishedRun is a background run as the follower leaves it just before end: two spool files
// in dir, nothing running.
func finishedRun(t *testing.T, b *Broker, dir string, i int) *Background {
	t.Helper()
	h := fmt.Sprintf("%s%012d", HandlePrefix, i)
	bg := &Background{Handle: h, Pane: "%1", Started: time.Now(), done: make(chan struct{}), begun: make(chan struct{})}
	var err error
	if bg.stdout, err = spool.Create(filepath.Join(dir, h+".out"), 0); err != nil {
		t.Fatal(err)
	}
	if bg.stderr, err = spool.Create(filepath.Join(dir, h+".err"), 0); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.background[h] = bg
	b.bgRunning++
	b.mu.Unlock()
	return bg
}

func testBroker(keep time.Duration) *Broker {
	return &Broker{cfg: Config{Limits: Limits{}.withDefaults()}, history: map[string][]RunRecord{},
		background: map[string]*Background{}, keepFinished: keep}
}

// Finished runs are kept KeepFinishedRuns at most: the oldest is forgotten, with its files,
// when one more ends; the slot of each ended run is free again.
func TestFinishedRunsKeptAtMost(t *testing.T) {
	b := testBroker(time.Hour)
	dir := t.TempDir()
	var runs []*Background
	for i := range KeepFinishedRuns + 1 {
		bg := finishedRun(t, b, dir, i)
		runs = append(runs, bg)
		b.end(bg, "", "", &Completion{Status: i % 256}, []byte("true"))
	}
	t.Cleanup(func() {
		for _, bg := range runs {
			if bg.forget != nil {
				bg.forget.Stop()
			}
		}
	})
	views := b.Backgrounds()
	if len(views) != KeepFinishedRuns || views[0].Handle != runs[1].Handle {
		t.Fatalf("%d runs kept, the oldest %s; want %d, from %s", len(views), views[0].Handle, KeepFinishedRuns, runs[1].Handle)
	}
	if _, err := os.Stat(filepath.Join(dir, runs[0].Handle+".out")); !os.IsNotExist(err) {
		t.Errorf("the forgotten run's stdout file: %v; want it removed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, runs[1].Handle+".out")); err != nil {
		t.Errorf("a kept run's stdout file: %v", err)
	}
	if b.bgRunning != 0 {
		t.Errorf("%d slots taken after every run ended; want 0", b.bgRunning)
	}
	if _, err := b.backgroundRun(runs[0].Handle); err == nil {
		t.Errorf("the forgotten run %s is still found", runs[0].Handle)
	}
}

// A finished run is forgotten, with its files, once it has been kept its time.
func TestFinishedRunForgottenAfterItsTime(t *testing.T) {
	b := testBroker(10 * time.Millisecond)
	forgotten := make(chan string, 1)
	b.onForget = func(h string) { forgotten <- h }
	dir := t.TempDir()
	bg := finishedRun(t, b, dir, 1)
	b.end(bg, "", "", &Completion{}, []byte("true"))
	select {
	case h := <-forgotten:
		if h != bg.Handle {
			t.Fatalf("forgot %s; want %s", h, bg.Handle)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a finished run kept 10 ms is not forgotten after 10 s")
	}
	if views := b.Backgrounds(); len(views) != 0 {
		t.Errorf("still listed after it was forgotten: %v", views)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("files left after the run was forgotten: %v", files)
	}
}
