package tmux_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// Behaviour that differs between tmux releases, checked on whichever tmux
// is first in PATH (.ci/run runs this package on 3.2a to 3.7c).

// TestSnapshotReadsEscapingVersions reads rows whose names and title hold
// backslashes, text shaped like an octal escape, and text shaped like a
// separator. tmux 3.4 and 3.5a print control characters in format output
// as octal escapes, so a parser splitting on control bytes failed there at
// the first row; a fixed printable separator could be forged by a title.
func TestSnapshotReadsEscapingVersions(t *testing.T) {
	s := tmuxtest.Start(t)
	pane := s.NewSession(`s\037<f0>`, "sh")
	s.Run("select-pane", "-t", pane, "-T", `t\036\037 <r0> x`)
	// tmux reads the path from the pane's process, which may not have
	// started yet.
	s.WaitFor(pane, func(string) bool {
		return strings.TrimSpace(s.Run("display-message", "-p", "-t", pane, "#{pane_current_path}")) != ""
	})
	snap, err := s.Client.Snapshot(context.Background(), tmux.Want{Sessions: true, Windows: true, Panes: true, Clients: true})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if len(snap.Panes) != 1 || len(snap.Sessions) != 1 || len(snap.Windows) != 1 {
		t.Fatalf("snapshot has %d sessions, %d windows, %d panes; want one of each", len(snap.Sessions), len(snap.Windows), len(snap.Panes))
	}
	p := snap.Panes[0]
	for _, c := range []struct{ name, got, format string }{
		{"session name", p.SessionName, "#{session_name}"},
		{"pane title", p.Title, "#{pane_title}"},
		{"current path", p.CurrentPath, "#{pane_current_path}"},
		{"pane id", p.ID, "#{pane_id}"},
		{"pane tty", p.TTY, "#{pane_tty}"},
	} {
		if want := strings.TrimSuffix(s.Run("display-message", "-p", "-t", pane, c.format), "\n"); c.got != want {
			t.Errorf("%s = %q; tmux prints %q", c.name, c.got, want)
		}
	}
}

// TestJoinedCaptureTrimsTrailingSpaces: tmux 3.2a's capture-pane -J pads a
// joined line with spaces (3.3a and later trim them), which made
// run_shell_command miss its own marker lines and answer pane_died.
func TestJoinedCaptureTrimsTrailingSpaces(t *testing.T) {
	s := tmuxtest.Start(t)
	pane := s.NewSession("", "sh")
	s.WaitFor(pane, func(screen string) bool { return strings.TrimSpace(screen) != "" }) // the prompt
	s.Type(pane, "printf 'x\\nab  \\n'; echo E''ND", true)
	s.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "\nEND") })
	ctx := context.Background()
	pos, err := s.Client.CapturePosition(ctx, pane)
	if err != nil {
		t.Fatal(err)
	}
	_, joined, err := s.Client.CaptureRowsJoined(ctx, pane, 0, pos)
	if err != nil {
		t.Fatal(err)
	}
	text, err := s.Client.Capture(ctx, pane, tmux.CaptureOptions{JoinWrapped: true})
	if err != nil {
		t.Fatal(err)
	}
	for what, lines := range map[string][]string{"CaptureRowsJoined": joined, "Capture -J": strings.Split(text, "\n")} {
		if !slices.Contains(lines, "x") || !slices.Contains(lines, "ab") || !slices.Contains(lines, "END") {
			t.Errorf("%s lines %q; want the lines \"x\" and \"ab\" without trailing spaces", what, lines)
		}
	}
}
