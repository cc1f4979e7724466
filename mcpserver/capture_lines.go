package mcpserver

import "strings"

// splitCapture splits capture-pane output into lines without the blank
// rows below the last text.
func splitCapture(out string) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for len(lines) > 0 && strings.TrimRight(lines[len(lines)-1], " ") == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
