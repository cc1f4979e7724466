package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type setPaneTitleParams struct {
	PaneID string `json:"paneId"`
	Title  string `json:"title"`
}

type setPaneTitleResult struct {
	PaneID string `json:"paneId"`
	Title  string `json:"title"`
}

func setPaneTitleTool() tool {
	return &typedTool[setPaneTitleParams, setPaneTitleResult]{toolSpec: toolSpec{
		name:    "set_pane_title",
		toolset: Manage,
		title:   "Set pane title",
		description: "Sets a pane's title. " +
			`Example: {"paneId":"%3","title":"server"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"title": litFormat},
		},
	}, handle: (*server).setPaneTitle}
}

func (s *server) setPaneTitle(ctx context.Context, _ *mcp.CallToolRequest, in setPaneTitleParams) (setPaneTitleResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return setPaneTitleResult{}, err
	}
	if err := checkPrintableText("title", in.Title); err != nil {
		return setPaneTitleResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"select-pane", "-t", in.PaneID, "-T", formatArg(in.Title)}, in.PaneID, "pane_title")
	if err != nil {
		return setPaneTitleResult{}, s.explainTargets(ctx, err, target{"pane", in.PaneID})
	}
	res := setPaneTitleResult{PaneID: in.PaneID, Title: v[0]}
	return res, nil
}
