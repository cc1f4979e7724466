package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// followed is what an agent following a pane with capture_since got.
type followed struct {
	lines   []string // every line received, in order
	missed  int      // the sum of missedLines
	answers []captureSinceResult
	// at holds, for each received line, its position in the pane's output
	// after the first cursor (counting the missed lines in).
	at []int
}

// follow calls capture_since from cursor until a line for which stop is
// true was received, pausing pause() between calls, and checks every
// answer's own promises: continuous exactly when nothing was missed.
func follow(t *testing.T, cs *mcp.ClientSession, pane, cursor string, stop func(string) bool, pause func()) followed {
	t.Helper()
	var f followed
	pos := 0
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		got := captureSince(t, cs, map[string]any{"paneId": pane, "cursor": cursor, "waitMs": 2000})
		f.answers = append(f.answers, got)
		if got.Continuous != (got.MissedLines == 0) {
			t.Fatalf("answer %d: continuous %v with missedLines %d", len(f.answers), got.Continuous, got.MissedLines)
		}
		f.missed += got.MissedLines
		pos += got.MissedLines
		cursor = got.Cursor
		for _, l := range got.Lines {
			f.lines = append(f.lines, l)
			f.at = append(f.at, pos)
			pos++
			if stop(l) {
				return f
			}
		}
		if pause != nil {
			pause()
		}
	}
	t.Fatalf("the stop line never came: %d lines, %d missed, last answer %+v", len(f.lines), f.missed, f.answers[len(f.answers)-1])
	return f
}

// gatedPane starts a pane running script (bash) once the returned gate is
// opened, on a server whose history-limit is limit, 80x24.
func gatedPane(t *testing.T, ts *tmuxtest.Server, limit int, script string) (pane string, open func()) {
	t.Helper()
	tmuxtest.Need(t, "bash")
	ts.Run("set-option", "-g", "history-limit", strconv.Itoa(limit))
	gate := filepath.Join(ts.Dir, "gate")
	pane = ts.NewSession("g", "bash", "--norc", "--noprofile", "-c", "while [ ! -e "+gate+" ]; do sleep 0.02; done; "+script+"; exec sleep 3600")
	ts.Run("resize-window", "-t", pane, "-x", "80", "-y", "24")
	return pane, func() { os.WriteFile(gate, nil, 0o600) }
}

// Issue 16: lines that repeat every 1, 2, 3 or 7 rows cannot fool the
// cursor, and a flood over the history is read to its end: every line kept
// exactly once, in order, and the lost ones counted exactly.
func TestCaptureSinceRepeatsAndFloods(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		script string
		want   func(i int) string // the i-th line printed
		n      int
	}{
		{"seq 1 5000", "seq 1 5000", func(i int) string { return strconv.Itoa(i + 1) }, 5000},
	}
	for _, p := range []int{1, 2, 3, 7} {
		cases = append(cases, struct {
			name   string
			script string
			want   func(i int) string
			n      int
		}{fmt.Sprintf("period %d", p), fmt.Sprintf("for ((i=0; i<6000; i++)); do echo row$((i %% %d)); done", p),
			func(i int) string { return "row" + strconv.Itoa(i%p) }, 6000})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			pane, open := gatedPane(t, ts, 2000, c.script+"; echo END")
			cs := connect(t, ts, Deps{})
			first := captureSince(t, cs, map[string]any{"paneId": pane})
			open()
			// Wait until the flood is over, then read: everything happened
			// between two calls.
			ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "END") })
			f := follow(t, cs, pane, first.Cursor, func(l string) bool { return l == "END" }, nil)
			if total := len(f.lines) + f.missed; total != c.n+1 {
				t.Fatalf("received %d + missed %d = %d; want exactly %d printed", len(f.lines), f.missed, total, c.n+1)
			}
			if f.missed == 0 || f.answers[0].Continuous {
				t.Errorf("a flood over history-limit 2000 answered continuous with nothing missed: %+v", f.answers[0])
			}
			for k, l := range f.lines[:len(f.lines)-1] {
				if want := c.want(f.at[k]); l != want {
					t.Fatalf("line %d (position %d) is %q; want %q", k, f.at[k], l, want)
				}
			}
			if len(f.answers) < 2 {
				t.Errorf("%d answers; want the kept lines over several calls (the read budget is 200)", len(f.answers))
			}
		})
	}
}

// Issue 16: clears, the alternate screen, wrapping at 40 columns and \r
// progress bars have a defined answer: the lines as the pane finished them,
// continuity as it was, and a note naming what happened.
func TestCaptureSinceScreens(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	script := `echo one; printf '\033[H\033[2J\033[3J'; echo two; printf '\033[?1049h\033[Hdrawn\r\nthere\r\n\033[?1049l'; echo three; ` +
		`printf 'x%.0s' $(seq 1 100); echo; printf 'p 10%%\rp 50%%\rp 100%%\n'; echo END`
	pane, open := gatedPane(t, ts, 2000, script)
	ts.Run("resize-window", "-t", pane, "-x", "40", "-y", "10")
	cs := connect(t, ts, Deps{})
	first := captureSince(t, cs, map[string]any{"paneId": pane})
	open()
	f := follow(t, cs, pane, first.Cursor, func(l string) bool { return l == "END" }, nil)
	want := []string{"one", "two", "three", strings.Repeat("x", 100), "p 100%", "END"}
	if fmt.Sprint(f.lines) != fmt.Sprint(want) || f.missed != 0 {
		t.Fatalf("lines %q, missed %d; want %q, none missed", f.lines, f.missed, want)
	}
	var notes string
	for _, a := range f.answers {
		if !a.Continuous {
			t.Errorf("answer %+v is not continuous; nothing was missed", a)
		}
		notes += a.Note
	}
	if !strings.Contains(notes, "cleared") || !strings.Contains(notes, "alternate screen") {
		t.Errorf("notes %q; want the clear and the alternate screen named", notes)
	}
}

// Issue 16: a pane printing repeating and distinct lines at full speed
// for 3 s while an agent polls every 200-700 ms: received + missed equals
// printed, exactly. It keeps both cores busy while it prints, in every
// tmux release's suite, so it is short; the 20 s version is integration's
// BenchmarkCaptureSinceSoak.
func TestCaptureSinceSoak(t *testing.T) {
	t.Parallel()
	soak(t, 3)
}

func soak(t *testing.T, seconds int) {
	ts := tmuxtest.Start(t)
	script := fmt.Sprintf(`n=0; end=$((SECONDS+%d)); while [ $SECONDS -lt $end ]; do for k in 1 2 3 4 5 6 7 8 9 10; do echo same; echo "beat $((n %% 3))"; echo "distinct $n"; n=$((n+3)); done; done; echo "END $n"`, seconds)
	pane, open := gatedPane(t, ts, 2000, script)
	cs := connect(t, ts, Deps{})
	first := captureSince(t, cs, map[string]any{"paneId": pane})
	open()
	f := follow(t, cs, pane, first.Cursor, func(l string) bool { return strings.HasPrefix(l, "END ") }, func() {
		time.Sleep(time.Duration(200+rand.IntN(500)) * time.Millisecond) // the agent's polling cadence
	})
	printed, _ := strconv.Atoi(strings.TrimPrefix(f.lines[len(f.lines)-1], "END "))
	if got := len(f.lines) + f.missed; got != printed+1 {
		t.Fatalf("received %d + missed %d = %d; want %d printed", len(f.lines), f.missed, got, printed+1)
	}
	t.Logf("%d lines printed, %d received, %d missed, %d calls", printed+1, len(f.lines), f.missed, len(f.answers))
}

// Issue 16: 20,000 repeating lines printed in well under a second between
// two calls: received + missed equals printed.
func TestCaptureSinceBurstOfRepeats(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane, open := gatedPane(t, ts, 2000, "yes same | head -n 20000; echo END")
	cs := connect(t, ts, Deps{})
	first := captureSince(t, cs, map[string]any{"paneId": pane})
	open()
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "END") })
	f := follow(t, cs, pane, first.Cursor, func(l string) bool { return l == "END" }, nil)
	if got := len(f.lines) + f.missed; got != 20001 || f.missed == 0 {
		t.Fatalf("received %d + missed %d = %d; want 20001, some missed", len(f.lines), f.missed, got)
	}
}

// Issue 16: with LIBTMUX_MCP_LIVE=0 nothing watches the pane between
// calls: missedLines is a lower bound, and the note says so.
func TestCaptureSinceWithoutLiveSaysLowerBound(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := bashSession(t, ts, "b")
	cs := connect(t, ts, Deps{Limits: Limits{NoLive: true}})
	first := captureSince(t, cs, map[string]any{"paneId": pane})
	ts.Type(pane, "echo hello", true)
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "hello\n") })
	got := captureSince(t, cs, map[string]any{"paneId": pane, "cursor": first.Cursor})
	if got.Streaming || !strings.Contains(got.Note, "lower bound") {
		t.Errorf("without live: %+v; want streaming:false and a note that missedLines is a lower bound", got)
	}
}

// Issue 16: wait_for_text finds a match that scrolled out of the pane's
// history between two looks: it is in the stream.
func TestWaitForTextFindsWhatScrolledPast(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane, open := gatedPane(t, ts, 10, "echo needle-$((3+4)); seq 1 3000")
	cs := connect(t, ts, Deps{})
	ch := waitText(cs, map[string]any{"paneId": pane, "pattern": "needle-7", "timeoutMs": 15000})
	waitingOn(t, ts)
	open()
	got := answer(t, ch)
	if got.Outcome != "matched" || got.Match != "needle-7" {
		t.Fatalf("got %+v; want matched needle-7", got)
	}
}

// A pane moved to another session no longer feeds its old session's
// connection: the next call says it cannot know what it missed, and the
// cursor after it is exact again.
func TestCaptureSinceMovedPane(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := bashSession(t, ts, "b")
	other := bashSession(t, ts, "o")
	cs := connect(t, ts, Deps{})
	first := captureSince(t, cs, map[string]any{"paneId": pane})
	ts.Run("join-pane", "-d", "-s", pane, "-t", other)
	ts.Type(pane, "echo moved-$((1+1))", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "moved-2\n") })
	got := captureSince(t, cs, map[string]any{"paneId": pane, "cursor": first.Cursor})
	if got.Continuous || !strings.Contains(got.Note, "lower bound") {
		t.Fatalf("after the move: %+v; want continuous:false and the lower-bound note", got)
	}
	ts.Type(pane, "echo after-$((1+1))", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "after-2\n") })
	got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor})
	if !got.Continuous || len(got.Lines) != 2 || got.Lines[0] != "$ echo after-$((1+1))" || got.Lines[1] != "after-2" {
		t.Errorf("the next call: %+v; want continuous, the prompt with the typed line (the view began at the prompt) and after-2", got)
	}
}

// A question a program prints and waits on never ends its line: capture_since shows it as
// unfinished (not in lines, not counted by the cursor), and says so when a wait found no line
// ended; once answered, the whole line comes in lines.
func TestCaptureSinceShowsTheUnfinishedLine(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("ask", "bash", "--norc", "--noprofile", "-i")
	ts.WaitFor(pane, func(s string) bool { return strings.TrimSpace(s) != "" })
	cs := connect(t, ts, Deps{})
	got := captureSince(t, cs, map[string]any{"paneId": pane})
	ts.Type(pane, "printf 'Contin''ue? [y/N] '; read answer; echo got-$answer", true)
	tmuxtest.Eventually(t, 15*time.Second, "the question shown as the unfinished line", func() bool {
		got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor, "waitMs": 200})
		return got.Unfinished == "Continue? [y/N]"
	}, func() string { return fmt.Sprintf("the last answer: %+v", got) })
	waited := captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor, "waitMs": 300})
	if len(waited.Lines) != 0 || waited.Unfinished != "Continue? [y/N]" || !strings.Contains(waited.Note, "waiting for input") {
		t.Errorf("a wait while the question stays: %+v; want no lines, the question unfinished, and a note saying a program may wait for input", waited)
	}
	ts.Type(pane, "y", true)
	var lines []string
	tmuxtest.Eventually(t, 15*time.Second, "the answered question and its echo in lines", func() bool {
		got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor, "waitMs": 200})
		lines = append(lines, got.Lines...)
		return slices.Contains(lines, "got-y")
	}, func() string { return fmt.Sprintf("lines %q", lines) })
	if !slices.Contains(lines, "Continue? [y/N] y") {
		t.Errorf("lines after the answer %q; want the question's whole line, Continue? [y/N] y", lines)
	}
}

// A question a program prints during a capture_since wait ends the wait once it has held still
// for a moment, long before the wait's own end; a shell's prompt already shown when the wait
// began does not (TestCaptureSinceShowsTheUnfinishedLine waits on one). The question comes only
// after the wait's first progress notification: the wait has begun then.
func TestCaptureSinceWaitEndsOnAQuestion(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	gate := filepath.Join(ts.Dir, "gate")
	pane := ts.NewSession("ask", "sh", "-c", "echo ready; while [ ! -e "+gate+" ]; do sleep 0.05; done; printf 'Overwrite? [y/N] '; read answer; echo got-$answer; sleep 30")
	ts.WaitForText(pane, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan struct{})
	var once sync.Once
	cs := connectWithProgress(t, ts, func(*mcp.ProgressNotificationParams) { once.Do(func() { close(waiting) }) })
	got := captureSince(t, cs, map[string]any{"paneId": pane})
	ch := make(chan reply[captureSinceResult], 1)
	go func() {
		params := &mcp.CallToolParams{Name: "capture_since", Arguments: map[string]any{"paneId": pane, "cursor": got.Cursor, "waitMs": 30000}}
		params.SetProgressToken("question")
		res, err := cs.CallTool(ctx, params)
		r := reply[captureSinceResult]{name: "capture_since", err: err}
		if err == nil && res.IsError {
			r.toolErr = fmt.Sprint(res.Content)
		} else if err == nil {
			raw, _ := json.Marshal(res.StructuredContent)
			r.err = json.Unmarshal(raw, &r.out)
		}
		ch <- r
	}()
	select {
	case <-waiting:
	case r := <-ch:
		t.Fatalf("capture_since answered before its wait began: %+v", r)
	case <-time.After(20 * time.Second):
		t.Fatal("no progress notification of the capture_since wait within 20 s")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The call's own wait is 30 s; the test's bound is shorter.
	asked := receive(t, ch, 20*time.Second)
	if len(asked.Lines) != 0 || asked.Unfinished != "Overwrite? [y/N]" || !strings.Contains(asked.Note, "answered before its wait ended") {
		t.Errorf("a wait during which a question came: %+v; want no lines, the question unfinished, and a note saying the wait ended on it", asked)
	}
}
