package mcpserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Issue 27: a line reads the same from every tool on every tmux version.
// tmux 3.6a and later capture a tab as a tab, earlier versions as spaces;
// a pane's view draws it as spaces.
func TestOneRenderingOfALine(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "bash")
	cs := connect(t, ts, Deps{})
	want := []string{"a       b", "1234567 x", "        lead", "trail"}
	seed := captureSince(t, cs, map[string]any{"paneId": pane})
	run := runCmd(t, cs, map[string]any{"paneId": pane, "command": `printf 'a\tb\n1234567\tx\n\tlead\ntrail\t\n'`})
	wantStatus(t, "printf with tabs", run, 0)
	if !slices.Equal(run.Output, want) {
		t.Errorf("run_shell_command: %q; want %q", run.Output, want)
	}
	var pc capturePaneResult
	call(t, cs, "capture_pane", map[string]any{"paneId": pane}, &pc)
	if !containsRun(pc.Lines, want) {
		t.Errorf("capture_pane: %q; want it to hold %q", pc.Lines, want)
	}
	since := captureSince(t, cs, map[string]any{"paneId": pane, "cursor": seed.Cursor})
	if !containsRun(since.Lines, want) {
		t.Errorf("capture_since: %q; want it to hold %q", since.Lines, want)
	}
	got := answer(t, waitText(cs, map[string]any{"paneId": pane, "pattern": "a       b", "timeoutMs": 5000}))
	if got.Outcome != "matched" {
		t.Errorf("wait_for_text for the line as the others show it: %+v", got)
	}
	var snap snapshotPaneResult
	call(t, cs, "snapshot_pane", map[string]any{"paneId": pane}, &snap)
	if !containsRun(snap.Lines, want) {
		t.Errorf("snapshot_pane: %q; want it to hold %q", snap.Lines, want)
	}
}

// containsRun reports whether want appears in lines as consecutive lines.
func containsRun(lines, want []string) bool {
	return strings.Contains("\n"+strings.Join(lines, "\n")+"\n", "\n"+strings.Join(want, "\n")+"\n")
}
