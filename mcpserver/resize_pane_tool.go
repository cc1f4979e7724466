package mcpserver

import (
	"context"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type resizePaneParams struct {
	PaneID string `json:"paneId"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	Zoom   bool   `json:"zoom,omitempty"`
}

type resizePaneResult struct {
	PaneID string `json:"paneId"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Zoomed bool   `json:"zoomed"`
}

func resizePaneTool() tool {
	return &typedTool[resizePaneParams, resizePaneResult]{toolSpec: toolSpec{
		name:    "resize_pane",
		toolset: Manage,
		title:   "Resize pane",
		description: "Resizes a pane within its window, or toggles zoom. " +
			`Example: {"paneId":"%3","width":100}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).resizePane}
}

func (s *server) resizePane(ctx context.Context, _ *mcp.CallToolRequest, in resizePaneParams) (resizePaneResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return resizePaneResult{}, err
	}
	args := []string{"resize-pane", "-t", in.PaneID}
	switch {
	case in.Zoom && (in.Width != 0 || in.Height != 0):
		return resizePaneResult{}, errors.New("give zoom or width/height, not both")
	case in.Zoom:
		args = append(args, "-Z")
	case in.Width == 0 && in.Height == 0:
		return resizePaneResult{}, errors.New("give width, height (or both), or zoom:true")
	}
	if err := checkSize("width", in.Width); err != nil {
		return resizePaneResult{}, err
	}
	if err := checkSize("height", in.Height); err != nil {
		return resizePaneResult{}, err
	}
	if in.Width > 0 {
		args = append(args, "-x", strconv.Itoa(in.Width))
	}
	if in.Height > 0 {
		args = append(args, "-y", strconv.Itoa(in.Height))
	}
	v, err := s.tmux.RunThenRead(ctx, args, in.PaneID, "pane_width", "pane_height", "window_zoomed_flag")
	if err != nil {
		return resizePaneResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	res := resizePaneResult{PaneID: in.PaneID, Zoomed: v[2] == "1"}
	res.Width, _ = strconv.Atoi(v[0])
	res.Height, _ = strconv.Atoi(v[1])
	return res, nil
}
