package live

import (
	"fmt"
	"strings"
)

// MarksNote says in words what marks record, each kind once, for a note
// beside lines read from a view. Line numbers are counted from base: 0
// for the pane's output, a command's begin line for that command's
// output.
func MarksNote(marks []Mark, base uint64) string {
	var what []string
	seen := map[MarkKind]bool{}
	for _, m := range marks {
		if seen[m.Kind] {
			continue
		}
		seen[m.Kind] = true
		switch m.Kind {
		case MarkClear:
			what = append(what, fmt.Sprintf("the screen was cleared after line %d", m.After-base))
		case MarkClearHist:
			what = append(what, "the scrollback was erased (tmux no longer has the older lines; they were delivered or counted)")
		case MarkReset:
			what = append(what, fmt.Sprintf("the terminal was reset after line %d", m.After-base))
		case MarkAltOn:
			what = append(what, "a full-screen program used the alternate screen (what it drew is not lines and is not returned)")
		}
	}
	return strings.Join(what, "; ")
}
