package mcpserver

import (
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/live"
)

// TestCaptureSinceCountsLongLines reads a line longer than a view keeps
// (live.MaxLineRunes): what it lost is in droppedChars and named.
func TestCaptureSinceCountsLongLines(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	const width = 66000
	pane, open := gatedPane(t, ts, 2000, `printf 'x%.0s' $(seq 1 66000); echo; echo SUMMARY`)
	cs := connect(t, ts, Deps{Limits: Limits{MaxResultChars: 1 << 20}})
	first := captureSince(t, cs, map[string]any{"paneId": pane})
	open()
	f := follow(t, cs, pane, first.Cursor, func(l string) bool { return l == "SUMMARY" }, nil)
	if len(f.lines) != 2 || f.lines[0] != strings.Repeat("x", live.MaxLineRunes) {
		t.Fatalf("got %d lines (the first of %d characters); want the long line's first %d characters, then SUMMARY", len(f.lines), len(f.lines[0]), live.MaxLineRunes)
	}
	dropped, notes := 0, ""
	for _, a := range f.answers {
		dropped += a.DroppedChars
		notes += a.Note
	}
	if want := width - live.MaxLineRunes; dropped != want || !strings.Contains(notes, "droppedChars") {
		t.Errorf("droppedChars %d, notes %q; want %d counted and named", dropped, notes, want)
	}
}
