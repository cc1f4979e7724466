package mcpserver

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Issue 27: whatever the lines' lengths, the last line printed is in the
// answer, and every character left out is counted.
func TestRunShellCommandKeepsTheLastLine(t *testing.T) {
	t.Parallel()
	tmuxtest.Need(t, "awk")
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "bash")
	cs := connect(t, ts, Deps{})
	// The printed lines, as awk prints them, for the exact count.
	long := func(n int, c string) string { return strings.Repeat(c, n) }
	var fifty []string
	for i := range 50 {
		fifty = append(fifty, fmt.Sprintf("%d:%s", i, long(2000, "y")))
	}
	cases := []struct {
		name, command string
		printed       []string
	}{
		{"50 lines of 2,000 characters, then a summary",
			`awk 'BEGIN { while (length(s) < 2000) s = s "y"; for (i = 0; i < 50; i++) print i ":" s; print "SUMMARY: 3 failed" }'`,
			append(fifty, "SUMMARY: 3 failed")},
		{"one line of 66,000 characters, then a summary",
			`awk 'BEGIN { while (length(s) < 66000) s = s "x"; print s; print "SUMMARY" }'`,
			[]string{long(66000, "x"), "SUMMARY"}},
		{"the summary itself longer than the budget",
			`awk 'BEGIN { print "start"; while (length(s) < 60000) s = s "z"; print s "END" }'`,
			[]string{"start", long(60000, "z") + "END"}},
	}
	for _, c := range cases {
		got := runCmd(t, cs, map[string]any{"paneId": pane, "command": c.command})
		wantStatus(t, c.name, got, 0)
		last := c.printed[len(c.printed)-1]
		if n := len(got.Output); n == 0 || !strings.HasSuffix(last, got.Output[n-1]) || !strings.HasSuffix(got.Output[n-1], last[max(len(last)-100, 0):]) {
			t.Errorf("%s: the answer ends %q; want the last line printed, or its end (note %q)", c.name, tail(got.Output), got.Note)
		}
		printed, returned := 0, 0
		for _, l := range c.printed {
			printed += utf8.RuneCountInString(l)
		}
		for _, l := range got.Output {
			returned += utf8.RuneCountInString(l)
		}
		if returned+got.DroppedChars != printed {
			t.Errorf("%s: %d characters returned and %d counted dropped; want them to add up to the %d printed (note %q)", c.name, returned, got.DroppedChars, printed, got.Note)
		}
		if len(got.Output)+got.DroppedLines != len(c.printed) && got.DroppedLines != 0 {
			t.Errorf("%s: %d lines returned and %d dropped; %d were printed", c.name, len(got.Output), got.DroppedLines, len(c.printed))
		}
		if got.DroppedChars > 0 && got.Note == "" {
			t.Errorf("%s: %d characters dropped without a note", c.name, got.DroppedChars)
		}
	}
}

func tail(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	l := lines[len(lines)-1]
	return l[max(len(l)-40, 0):]
}

// Issue 27: what the screen did during a command is named, as
// capture_since names it.
func TestRunShellCommandNamesScreenEvents(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := shellPane(t, ts, "bash")
	cs := connect(t, ts, Deps{})
	got := runCmd(t, cs, map[string]any{"paneId": pane, "command": `echo before; printf '\033[H\033[2J'; echo after; printf '\033[?1049h'; echo in-alt; printf '\033[?1049l'; echo back`})
	wantStatus(t, "clear and alternate screen", got, 0)
	if strings.Join(got.Output, ",") != "before,after,back" {
		t.Errorf("output %q; want before, after, back", got.Output)
	}
	if !strings.Contains(got.Note, "the screen was cleared after line 1") || !strings.Contains(got.Note, "alternate screen") {
		t.Errorf("note %q; want the clear (after line 1) and the alternate screen named", got.Note)
	}
}
