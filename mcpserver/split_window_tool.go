package mcpserver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type splitWindowParams struct {
	PaneID         string `json:"paneId"`
	Direction      string `json:"direction,omitempty" jsonschema:"horizontal (side by side) or vertical (default)"`
	Size           int    `json:"size,omitempty" jsonschema:"percent, 1-99"`
	StartDirectory string `json:"startDirectory,omitempty" jsonschema:"absolute; omitted: the pane's"`
}

type splitWindowResult struct {
	PaneID   string `json:"paneId" jsonschema:"the new pane"`
	WindowID string `json:"windowId"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
}

func splitWindowTool() tool {
	return &typedTool[splitWindowParams, splitWindowResult]{toolSpec: toolSpec{
		name:    "split_window",
		toolset: Manage,
		title:   "Split pane",
		description: "Splits a pane; the new one runs a shell, unfocused. " +
			`Example: {"paneId":"%3","direction":"horizontal","size":30}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"startDirectory": litFormat},
		},
	}, handle: (*server).splitWindow}
}

func (s *server) splitWindow(ctx context.Context, _ *mcp.CallToolRequest, in splitWindowParams) (splitWindowResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return splitWindowResult{}, err
	}
	args := []string{"split-window", "-d", "-t", in.PaneID}
	switch in.Direction {
	case "horizontal":
		args = append(args, "-h")
	case "vertical", "":
		args = append(args, "-v")
	default:
		return splitWindowResult{}, fmt.Errorf("direction %q is neither horizontal (side by side) nor vertical (stacked)", in.Direction)
	}
	if in.Size != 0 {
		if in.Size < 1 || in.Size > 99 {
			return splitWindowResult{}, fmt.Errorf("size %d is not a percentage from 1 to 99", in.Size)
		}
		args = append(args, "-l", strconv.Itoa(in.Size)+"%")
	}
	if err := checkDirectory(in.StartDirectory); err != nil {
		return splitWindowResult{}, err
	}
	dir, err := s.startDirectory(ctx, in.StartDirectory, in.PaneID)
	if err != nil {
		return splitWindowResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	v, err := s.tmux.RunPrinting(ctx, append(args, dir...), "pane_id", "window_id", "pane_width", "pane_height")
	if err != nil {
		return splitWindowResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	res := splitWindowResult{PaneID: v[0], WindowID: v[1]}
	res.Width, _ = strconv.Atoi(v[2])
	res.Height, _ = strconv.Atoi(v[3])
	return res, nil
}
