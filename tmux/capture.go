package tmux

import (
	"context"
	"fmt"
	"strconv"
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
	return c.Run(ctx, args...)
}
