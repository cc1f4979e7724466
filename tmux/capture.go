package tmux

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// CaptureOptions chooses what capture-pane reads. Start and End are line
// numbers as tmux takes them (0 is the first visible row, negative values
// reach into the history); nil means the visible screen's edge.
type CaptureOptions struct {
	Start, End  *int
	JoinWrapped bool // join lines that wrapped at the pane's width
	Escapes     bool // keep colour and attribute escapes
}

// Capture returns the text of pane paneID as capture-pane prints it.
func (c *Client) Capture(ctx context.Context, paneID string, opt CaptureOptions) (string, error) {
	if !ValidPaneID(paneID) {
		return "", fmt.Errorf("pane id %q is not of the form %%N", paneID)
	}
	args := []string{"capture-pane", "-p", "-t", paneID}
	if opt.Start != nil {
		args = append(args, "-S", strconv.Itoa(*opt.Start))
	}
	if opt.End != nil {
		args = append(args, "-E", strconv.Itoa(*opt.End))
	}
	if opt.JoinWrapped {
		args = append(args, "-J")
	}
	if opt.Escapes {
		args = append(args, "-e")
	}
	out, err := c.Run(ctx, args...)
	if err == nil && !opt.Escapes {
		out = ExpandTabs(out)
	}
	if err != nil || !opt.JoinWrapped {
		return out, err
	}
	lines := strings.Split(out, "\n")
	trimJoined(lines)
	return strings.Join(lines, "\n"), nil
}

// trimJoined trims the trailing spaces of joined lines (capture-pane -J):
// tmux 3.2a keeps them, 3.3a and later trim them as they do for every
// unjoined row, so a line reads the same on every version.
func trimJoined(lines []string) {
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
}

// SplitCapture splits capture-pane output into lines without the blank
// rows below the last text, tabs written as spaces (ExpandTabs).
func SplitCapture(out string) []string {
	lines := strings.Split(strings.TrimRight(ExpandTabs(out), "\n"), "\n")
	for len(lines) > 0 && strings.TrimRight(lines[len(lines)-1], " ") == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
