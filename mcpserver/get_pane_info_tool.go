package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type paneInfoParams struct {
	PaneID string `json:"paneId"`
}

type paneInfoResult struct {
	Pane paneRow `json:"pane"`
}

func getPaneInfoTool() tool {
	return &typedTool[paneInfoParams, paneInfoResult]{toolSpec: toolSpec{
		name:    "get_pane_info",
		toolset: Inspect,
		title:   "Pane info",
		description: "One pane's list_panes row. " +
			`Example: {"paneId":"%3"}`,
		capability: metadataOnly,
	}, handle: (*server).paneInfo}
}

func (s *server) paneInfo(ctx context.Context, _ *mcp.CallToolRequest, in paneInfoParams) (paneInfoResult, error) {
	row, err := s.onePane(ctx, in.PaneID)
	return paneInfoResult{Pane: row}, err
}
