package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func captureSince(t *testing.T, cs *mcp.ClientSession, args map[string]any) captureSinceResult {
	t.Helper()
	var out captureSinceResult
	call(t, cs, "capture_since", args, &out)
	return out
}

func TestCaptureSinceGrowingLog(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	log := filepath.Join(ts.Dir, "log")
	if err := os.WriteFile(log, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pane := ts.NewSession("s", "tail", "-n", "+1", "-f", log)
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "first") })
	cs := connect(t, ts, Deps{})

	got := captureSince(t, cs, map[string]any{"paneId": pane})
	if fmt.Sprint(got.Lines) != "[first]" || !got.Continuous || !got.Streaming || got.Cursor == "" {
		t.Fatalf("seed: %+v; want the screen's one finished line and a cursor", got)
	}
	cursor := got.Cursor
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for round := 1; round <= 10; round++ {
		var want []string
		for i := 0; i < round; i++ {
			want = append(want, fmt.Sprintf("round %d line %d", round, i))
		}
		if _, err := f.WriteString(strings.Join(want, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
		var lines []string
		tmuxtest.Eventually(t, 10*time.Second, fmt.Sprintf("round %d's %d lines", round, len(want)), func() bool {
			got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": cursor, "waitMs": 5000})
			if !got.Continuous || got.MissedLines != 0 {
				t.Fatalf("round %d: %+v; want continuous", round, got)
			}
			lines = append(lines, got.Lines...)
			cursor = got.Cursor
			return len(lines) >= len(want)
		}, func() string { return fmt.Sprintf("lines so far %q", lines) })
		if fmt.Sprint(lines) != fmt.Sprint(want) {
			t.Fatalf("capture %d: lines %q; want only the new %q", round, lines, want)
		}
	}
	// Nothing new: an immediate answer with no lines and the same cursor.
	got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": cursor})
	if len(got.Lines) != 0 || got.Cursor != cursor || !got.Continuous {
		t.Errorf("nothing new: %+v; want no lines, cursor %s", got, cursor)
	}
	// waitMs with nothing new ends at its deadline.
	begin := time.Now()
	got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": cursor, "waitMs": 300})
	if len(got.Lines) != 0 || got.EffectiveTimeoutMs != 300 || time.Since(begin) < 250*time.Millisecond {
		t.Errorf("idle wait: %+v after %s; want no lines after about 300 ms", got, time.Since(begin))
	}
	// waitMs with lines already there answers at once, and still reports
	// the timeout that applied.
	f.WriteString("already here\n")
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "already here") })
	got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor, "waitMs": 3000})
	if fmt.Sprint(got.Lines) != "[already here]" || got.EffectiveTimeoutMs != 3000 {
		t.Errorf("wait with lines ready: %+v; want [already here] and effectiveTimeoutMs 3000", got)
	}
}

func TestCaptureSinceClear(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, clear string }{
		// As clear sends it where the terminal has E3 (xterm, tmux-256color):
		// home, erase the screen, erase the scrollback.
		{"clear with E3", `printf '\033[H\033[2J\033[3J'`},
		// Where it has none (screen): tmux keeps the erased screen in the
		// history, so the anchor stays where it was.
		{"clear without E3", `printf '\033[H\033[J'`},
		// The program itself, with the test server's TERM (screen).
		{"the clear program", "clear"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			pane := bashSession(t, ts, "b")
			cs := connect(t, ts, Deps{})
			ts.Type(pane, "seq 1 5", true)
			ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "5\n$") })
			got := captureSince(t, cs, map[string]any{"paneId": pane})
			ts.Type(pane, c.clear+"; echo after-clear", true)
			// A line of its own: the typed command line ends in "after-clear" too.
			ts.WaitFor(pane, func(screen string) bool { return hasLine(screen, "after-clear") })
			got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor})
			// The server watched every byte: nothing was missed, and the
			// note names the clear.
			if !got.Continuous || got.MissedLines != 0 || !strings.Contains(got.Note, "cleared") {
				t.Errorf("after clear: %+v; want continuous, nothing missed, a note naming the clear", got)
			}
			if n := len(got.Lines); n != 2 || got.Lines[1] != "after-clear" || !strings.Contains(got.Lines[0], "echo after-clear") {
				t.Errorf("after clear: lines %q; want the typed line and after-clear", got.Lines)
			}
			next := captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor})
			if !next.Continuous || len(next.Lines) != 0 {
				t.Errorf("after the discontinuity: %+v; want continuous and nothing new", next)
			}
		})
	}
}

// TestCaptureSinceResize: a pane made shorter pushes rows into the history
// and moves the cursor up, like clear; it is not a discontinuity.
func TestCaptureSinceResize(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := bashSession(t, ts, "b")
	cs := connect(t, ts, Deps{})
	ts.Type(pane, "seq 1 40", true) // the cursor ends on the bottom row
	ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "40\n$") })
	got := captureSince(t, cs, map[string]any{"paneId": pane})
	ts.Run("split-window", "-v", "-d", "-t", pane) // pane is now about half as tall
	ts.Type(pane, "echo after-resize", true)
	ts.WaitFor(pane, func(screen string) bool { return hasLine(screen, "after-resize") })
	got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor})
	if !got.Continuous || !strings.Contains(strings.Join(got.Lines, "\n"), "after-resize") {
		t.Errorf("after a resize: %+v; want continuous with the new lines", got)
	}
}

func TestCaptureSinceRefusals(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("s", "sleep", "600")
	other := ts.NewSession("t", "sleep", "600")
	// The fallback path, on purpose: what capture_since says without
	// control mode (LIBTMUX_MCP_LIVE=0).
	cs := connect(t, ts, Deps{Limits: Limits{NoLive: true}})
	got := captureSince(t, cs, map[string]any{"paneId": pane, "waitMs": 100})
	if got.Streaming {
		t.Errorf("LIBTMUX_MCP_LIVE=0: %+v; want streaming:false", got)
	}
	got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor, "waitMs": 5000})
	if got.Streaming || got.EffectiveTimeoutMs != 0 || !strings.Contains(got.Note, "LIBTMUX_MCP_LIVE=0") {
		t.Errorf("waitMs without control mode: %+v; want an answer at once saying why", got)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"paneId": "x"}, "not a tmux pane id"},
		{map[string]any{"paneId": "%99"}, "no pane %99"},
		{map[string]any{"paneId": pane, "cursor": "garbage"}, "not one this server returned"},
		{map[string]any{"paneId": other, "cursor": got.Cursor}, "belongs to pane " + pane},
	} {
		callErr(t, cs, "capture_since", c.args, c.want)
	}
}

// hasLine reports whether a line of screen is exactly line.
func hasLine(screen, line string) bool {
	return slices.Contains(strings.Split(screen, "\n"), line)
}

// numbered reads "n N" lines into numbers.
func numbered(t *testing.T, lines []string) []int {
	var out []int
	for _, l := range lines {
		if n, err := strconv.Atoi(strings.TrimPrefix(l, "n ")); err == nil && strings.HasPrefix(l, "n ") {
			out = append(out, n)
		}
	}
	return out
}

// TestCaptureSinceScrolling reads a pane printing numbered lines without
// pause, 60 times: every continuous answer must continue exactly where the
// last one ended (no false continuous:true), and with a history big enough
// to hold the output no answer may be continuous:false.
func TestCaptureSinceScrolling(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		history int
		pause   bool // print slowly enough that reads keep up
	}{{"roomy history", 50000, true}, {"history of 200 lines, trimmed between reads", 200, true}, {"history of 200 lines, outrun", 200, false}} {
		t.Run(c.name, func(t *testing.T) {
			ts := tmuxtest.Start(t)
			ts.Run("set", "-g", "history-limit", strconv.Itoa(c.history))
			script := "i=0; while :; do echo \"n $i\"; i=$((i+1)); done"
			if c.pause {
				script = "i=0; while :; do for k in 1 2 3 4 5 6 7 8 9 10; do echo \"n $i\"; i=$((i+1)); done; sleep 0.01; done"
			}
			pane := ts.NewSession("s", "bash", "-c", script)
			cs := connect(t, ts, Deps{Limits: Limits{MaxResultLines: 100000, MaxResultChars: 1 << 24}})
			got := captureSince(t, cs, map[string]any{"paneId": pane})
			last := -1
			if ns := numbered(t, got.Lines); len(ns) > 0 {
				last = ns[len(ns)-1]
			}
			breaks, missed := 0, 0
			for i := 0; i < 60; i++ {
				got = captureSince(t, cs, map[string]any{"paneId": pane, "cursor": got.Cursor, "waitMs": 5000})
				ns := numbered(t, got.Lines)
				if !got.Continuous {
					breaks++
					if c.pause {
						t.Fatalf("read %d: continuous:false while the reads kept up: %+v", i, got.Note)
					}
					if !strings.Contains(got.Note, "history-limit") {
						t.Errorf("read %d: continuous:false from overrun with note %q", i, got.Note)
					}
					missed += got.MissedLines
				} else if last >= 0 && len(ns) > 0 && ns[0] != last+1 {
					t.Fatalf("read %d: continuous:true but the lines start at %d after %d", i, ns[0], last)
				}
				for j := 1; j < len(ns); j++ {
					if ns[j] != ns[j-1]+1 {
						t.Fatalf("read %d: lines jump from %d to %d inside one answer", i, ns[j-1], ns[j])
					}
				}
				if len(ns) > 0 {
					last = ns[len(ns)-1]
				}
			}
			if c.pause && c.history < last {
				// The trims happened: continuity was found across them.
				t.Logf("%s: history trimmed about %d times", c.name, last/(c.history/10))
			}
			t.Logf("%s: last line %d, %d discontinuities in 60 reads, at least %d lines missed", c.name, last, breaks, missed)
		})
	}
}
