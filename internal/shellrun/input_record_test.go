package shellrun

import (
	"strings"
	"testing"
)

func TestTypedLogDiscountsEcho(t *testing.T) {
	var l typedLog
	l.noteTyped("%1", "make build && echo done\n")
	screen := "$ make build && echo done\nbuilding\ndone"
	got := l.discount("%1", screen)
	if strings.Contains(got, "make build") || !strings.Contains(got, "\ndone") {
		t.Errorf("discount: %q; want the echo blanked and the output kept", got)
	}
	if l.discount("%2", screen) != screen {
		t.Error("another pane's input was discounted")
	}
	// Typed while the shell was busy: the terminal's echo, then the editor's redraw.
	twice := "make build && echo done\n$ make build && echo done\nbuilding\ndone"
	if got := l.discount("%1", twice); strings.Contains(got, "make build") || !strings.Contains(got, "\ndone") {
		t.Errorf("discount of a line shown twice: %q; want both echoes blanked and the output kept", got)
	}
}
