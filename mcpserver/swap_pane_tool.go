package mcpserver

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type swapPaneParams struct {
	PaneID       string `json:"paneId"`
	TargetPaneID string `json:"targetPaneId"`
}

type swapPaneResult struct {
	PaneID         string `json:"paneId"`
	WindowID       string `json:"windowId"`
	TargetPaneID   string `json:"targetPaneId"`
	TargetWindowID string `json:"targetWindowId"`
}

func swapPaneTool() tool {
	return &typedTool[swapPaneParams, swapPaneResult]{toolSpec: toolSpec{
		name:    "swap_pane",
		toolset: Manage,
		title:   "Swap panes",
		description: "Two panes trade places; ids and programs stay. " +
			`Example: {"paneId":"%3","targetPaneId":"%4"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).swapPane}
}

func (s *server) swapPane(ctx context.Context, _ *mcp.CallToolRequest, in swapPaneParams) (swapPaneResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return swapPaneResult{}, err
	}
	if err := checkID("pane", in.TargetPaneID); err != nil {
		return swapPaneResult{}, err
	}
	if in.PaneID == in.TargetPaneID {
		return swapPaneResult{}, errors.New("paneId and targetPaneId are the same pane; name two panes")
	}
	// -d: which pane is active stays as it was.
	out, err := s.tmux.Run(ctx, "swap-pane", "-d", "-s", in.PaneID, "-t", in.TargetPaneID,
		";", "display-message", "-p", "-t", in.PaneID, "#{window_id}",
		";", "display-message", "-p", "-t", in.TargetPaneID, "#{window_id}")
	if err != nil {
		return swapPaneResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID}, target{"pane", in.TargetPaneID})
	}
	w := strings.Fields(out)
	if len(w) != 2 {
		return swapPaneResult{}, errors.New("tmux swapped the panes but did not report their windows: " + out)
	}
	return swapPaneResult{PaneID: in.PaneID, WindowID: w[0], TargetPaneID: in.TargetPaneID, TargetWindowID: w[1]}, nil
}
