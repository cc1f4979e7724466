package mcpserver

import (
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// splitCapture splits capture-pane output into lines without the blank
// rows below the last text, tabs written as spaces (tmux.ExpandTabs).
func splitCapture(out string) []string {
	lines := strings.Split(strings.TrimRight(tmux.ExpandTabs(out), "\n"), "\n")
	for len(lines) > 0 && strings.TrimRight(lines[len(lines)-1], " ") == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
