package tmux

import (
	"context"
	"fmt"
)

// PaneBox is where a pane sits in its window, in cells: Left and Top are
// its first column and row, Right and Bottom its last (inclusive).
type PaneBox struct {
	ID                        string
	Active                    bool
	Left, Top, Right, Bottom  int
	WindowWidth, WindowHeight int
	WindowZoomed              bool
}

var paneBoxFields = []field[PaneBox]{
	str("pane_id", func(r *PaneBox) *string { return &r.ID }),
	flag("pane_active", func(r *PaneBox) *bool { return &r.Active }),
	num("pane_left", func(r *PaneBox) *int { return &r.Left }),
	num("pane_top", func(r *PaneBox) *int { return &r.Top }),
	num("pane_right", func(r *PaneBox) *int { return &r.Right }),
	num("pane_bottom", func(r *PaneBox) *int { return &r.Bottom }),
	num("window_width", func(r *PaneBox) *int { return &r.WindowWidth }),
	num("window_height", func(r *PaneBox) *int { return &r.WindowHeight }),
	flag("window_zoomed_flag", func(r *PaneBox) *bool { return &r.WindowZoomed }),
}

// PaneBoxes reads where each pane of window windowID sits, in one call.
func (c *Client) PaneBoxes(ctx context.Context, windowID string) ([]PaneBox, error) {
	if !ValidWindowID(windowID) {
		return nil, fmt.Errorf("window id %q is not of the form @N", windowID)
	}
	seps := NewSeparators()
	out, err := c.Run(ctx, "list-panes", "-t", windowID, "-F", format(paneBoxFields, seps))
	if err != nil {
		return nil, err
	}
	return parseRows(out, paneBoxFields, seps)
}
