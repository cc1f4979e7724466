package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type selectPaneParams struct {
	PaneID string `json:"paneId"`
}

type selectPaneResult struct {
	PaneID   string `json:"paneId"`
	WindowID string `json:"windowId"`
	Active   bool   `json:"active"`
}

func selectPaneTool() tool {
	return &typedTool[selectPaneParams, selectPaneResult]{toolSpec: toolSpec{
		name:    "select_pane",
		toolset: Manage,
		title:   "Select pane",
		description: "Makes a pane its window's active pane. " +
			`Example: {"paneId":"%3"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).selectPane}
}

func (s *server) selectPane(ctx context.Context, _ *mcp.CallToolRequest, in selectPaneParams) (selectPaneResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return selectPaneResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"select-pane", "-t", in.PaneID}, in.PaneID, "window_id", "pane_active")
	if err != nil {
		return selectPaneResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	return selectPaneResult{PaneID: in.PaneID, WindowID: v[0], Active: v[1] == "1"}, nil
}
