package mcpserver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// TestNewPanesStartInTheTargetsDirectory splits a pane, and adds a window
// to a session, whose directories differ from those of the panes a person
// sees (the active pane of the current window): tmux expands
// #{pane_current_path} in the session's context, so the new pane started
// in the active pane's directory, whatever the target.
func TestNewPanesStartInTheTargetsDirectory(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	active, target := filepath.Join(ts.Dir, "active"), filepath.Join(ts.Dir, "target #{pane_id}")
	for _, d := range []string{active, target} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ts.Run("new-session", "-d", "-s", "day", "-c", active, "sh")
	// A second window, not the current one, whose pane works in target.
	pane := tmuxSaysNew(ts, "new-window", "-d", "-t", "day:", "-c", tmux.Literal(target), "sh")
	// tmux reads the path from the pane's process, which may not have started yet.
	tmuxtest.Eventually(t, 10*time.Second, "the target pane working in "+target, func() bool {
		return tmuxSays(ts, pane, "#{pane_current_path}") == target
	}, func() string { return tmuxSays(ts, pane, "#{pane_current_path}") })
	cs := connectAll(t, ts, "", Deps{})

	var split splitWindowResult
	call(t, cs, "split_window", map[string]any{"paneId": pane}, &split)
	tmuxtest.Eventually(t, 10*time.Second, "the split pane starting in "+target, func() bool {
		return tmuxSays(ts, split.PaneID, "#{pane_current_path}") == target
	}, func() string { return tmuxSays(ts, split.PaneID, "#{pane_current_path}") })

	// The session's current window is now the second: create_window starts
	// in its active pane's directory, the target's.
	ts.Run("select-window", "-t", pane)
	var win createWindowResult
	call(t, cs, "create_window", map[string]any{"sessionName": "day"}, &win)
	tmuxtest.Eventually(t, 10*time.Second, "the new window starting in "+target, func() bool {
		return tmuxSays(ts, win.PaneID, "#{pane_current_path}") == target
	}, func() string { return tmuxSays(ts, win.PaneID, "#{pane_current_path}") })
}

// tmuxSaysNew runs a command that makes a pane and returns the pane's id.
func tmuxSaysNew(ts *tmuxtest.Server, args ...string) string {
	out := ts.Run(append([]string{args[0], "-P", "-F", "#{pane_id}"}, args[1:]...)...)
	return out[:len(out)-1]
}
