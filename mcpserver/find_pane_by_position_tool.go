package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type findPaneParams struct {
	WindowID string `json:"windowId"`
	X        int    `json:"x"`
	Y        int    `json:"y"`
}

type findPaneResult struct {
	PaneID string `json:"paneId"`
	Left   int    `json:"left"`
	Top    int    `json:"top"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Active bool   `json:"active"`
}

func findPaneByPositionTool() tool {
	return &typedTool[findPaneParams, findPaneResult]{toolSpec: toolSpec{
		name:    "find_pane_by_position",
		toolset: Inspect,
		title:   "Find pane by position",
		description: "The pane covering column x, row y (0-based) of a window, with its box. " +
			`Example: {"windowId":"@1","x":100,"y":5}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"windowId": litValidated},
		},
	}, handle: (*server).findPaneByPosition}
}

func (s *server) findPaneByPosition(ctx context.Context, _ *mcp.CallToolRequest, in findPaneParams) (findPaneResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return findPaneResult{}, err
	}
	boxes, err := s.tmux.PaneBoxes(ctx, in.WindowID)
	if err != nil {
		return findPaneResult{}, s.explain(ctx, err, "window", in.WindowID)
	}
	if len(boxes) == 0 {
		return findPaneResult{}, fmt.Errorf("no window %s on this server; call list_windows for those that exist", in.WindowID)
	}
	w, h := boxes[0].WindowWidth, boxes[0].WindowHeight
	if in.X < 0 || in.Y < 0 || in.X >= w || in.Y >= h {
		return findPaneResult{}, fmt.Errorf("(%d,%d) is outside window %s, which is %d columns by %d rows; x runs 0..%d and y 0..%d", in.X, in.Y, in.WindowID, w, h, w-1, h-1)
	}
	for _, b := range boxes {
		if b.WindowZoomed && !b.Active {
			continue // hidden behind the zoomed pane
		}
		if b.WindowZoomed {
			b.Left, b.Top, b.Right, b.Bottom = 0, 0, w-1, h-1
		}
		if in.X >= b.Left && in.X <= b.Right && in.Y >= b.Top && in.Y <= b.Bottom {
			return findPaneResult{PaneID: b.ID, Left: b.Left, Top: b.Top, Width: b.Right - b.Left + 1, Height: b.Bottom - b.Top + 1, Active: b.Active}, nil
		}
	}
	return findPaneResult{}, fmt.Errorf("(%d,%d) is on a border between panes of window %s; move one cell to either side", in.X, in.Y, in.WindowID)
}
