package shellrun

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"github.com/libtmux/libtmux-mcp/live"
)

// shellRun is one framed command typed into a pane: while it runs it holds
// the pane (one framed command per pane at a time), and, on a view, it
// follows the pane's lines for its markers, keeping the first lines of its
// output as they come (the rest is in the view's ring).
type shellRun struct {
	handle   string
	pane     string
	command  string
	started  time.Time
	f        frame
	headMax  int
	view     *live.View // the view that follows it; nil without one
	shellPID int        // the pane's shell

	release func()            // the view's hold
	claim   *panerecord.Claim // the pane's claim every process sees; nil without one (under mu)
	ended   sync.Once
	unhook  func() // stops following the view's lines; under the view's lock

	mu     sync.Mutex
	begin  uint64 // line number of the begin marker; 0 until seen
	end    uint64 // line number of the status line; 0 until seen
	status int
	count  uint64   // output lines between the markers so far
	head   []string // the first headMax of them
	last   string   // the newest of them
	done   chan struct{}
	begun  chan struct{} // closed when the begin marker is seen
	lost   string        // why the run can no longer be followed ("" while it can)
	// interrupted: the shell came back to its prompt without the status
	// line (C-c ends a shell's command line there).
	interrupted bool
}

// runs is the server's registry of framed commands: the one in flight per
// pane, and every run by handle until its answer was collected or it ended
// long ago.
type runs struct {
	mu      sync.Mutex
	byPane  map[string]*shellRun
	byID    map[string]*shellRun
	expires map[string]time.Time
}

// claim reserves pane for a new run, or says which run holds it.
func (r *runs) claim(pane, command string) (*shellRun, *shellRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byPane == nil {
		r.byPane, r.byID, r.expires = map[string]*shellRun{}, map[string]*shellRun{}, map[string]time.Time{}
	}
	if o := r.byPane[pane]; o != nil {
		return nil, o
	}
	b := make([]byte, 6)
	rand.Read(b)
	run := &shellRun{handle: "rsc-" + hex.EncodeToString(b), pane: pane, command: command, started: time.Now(), done: make(chan struct{}), begun: make(chan struct{})}
	r.byPane[pane] = run
	r.byID[run.handle] = run
	// Forget runs ended long ago.
	now := time.Now()
	for id, t := range r.expires {
		if now.After(t) {
			delete(r.byID, id)
			delete(r.expires, id)
		}
	}
	return run, nil
}

// free lets pane take another run, and keeps run's answer for keep.
func (r *runs) free(run *shellRun, keep time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byPane[run.pane] == run {
		delete(r.byPane, run.pane)
	}
	r.expires[run.handle] = time.Now().Add(keep)
	run.mu.Lock()
	run.claim.Release()
	run.claim = nil
	run.mu.Unlock()
}

// lookup finds a run by handle.
func (r *runs) lookup(handle string) *shellRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[handle]
}

// busyError is the refusal of a run on a pane that has one in flight.
// Without the pane's view (handles says so) a run cannot be waited for by
// its handle, so the refusal says how to watch it instead.
func busyError(o *shellRun, handles bool) error {
	cmd := o.command
	if utf8.RuneCountInString(cmd) > 80 {
		cmd = string([]rune(cmd)[:80]) + "…"
	}
	wait := fmt.Sprintf("wait for it with wait_for_run {\"handle\":%q} (cancel_run stops it)", o.handle)
	if !handles {
		wait = "watch it with capture_pane, or stop it with send_keys C-c"
	}
	return fmt.Errorf("run_in_progress: pane %s is still running %q (handle %s, started %s ago); one command runs per pane at a time: %s, or use another pane",
		o.pane, cmd, o.handle, time.Since(o.started).Round(time.Second), wait)
}

// onLine follows the view's lines for the run's markers. It runs inside
// the view's lock, so it only records.
func (r *shellRun) onLine(n uint64, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.end != 0:
	case r.begin == 0:
		if r.f.isBegin(line) {
			r.begin = n
			close(r.begun)
		}
	default:
		if rest, ok := strings.CutPrefix(line, r.f.end); ok {
			if st, err := strconv.Atoi(rest); err == nil {
				r.end, r.status = n, st
				close(r.done)
				return
			}
		}
		r.count++
		r.last = line
		if len(r.head) < r.headMax {
			r.head = append(r.head, line)
		}
	}
}

// stop marks the run as no longer followed, for why, unless it ended.
func (r *shellRun) stop(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.end == 0 && r.lost == "" {
		r.lost = why
		close(r.done)
	}
}
