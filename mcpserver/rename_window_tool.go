package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type renameWindowParams struct {
	WindowID string `json:"windowId"`
	Name     string `json:"name"`
}

type renameWindowResult struct {
	WindowID string `json:"windowId"`
	Name     string `json:"name"`
	Note     string `json:"note,omitempty"`
}

func renameWindowTool() tool {
	return &typedTool[renameWindowParams, renameWindowResult]{toolSpec: toolSpec{
		name:    "rename_window",
		toolset: Manage,
		title:   "Rename window",
		description: "Renames a window. " +
			`Example: {"windowId":"@2","name":"logs"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"name": litFormat},
		},
	}, handle: (*server).renameWindow}
}

func (s *server) renameWindow(ctx context.Context, _ *mcp.CallToolRequest, in renameWindowParams) (renameWindowResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return renameWindowResult{}, err
	}
	if err := checkName("name", in.Name); err != nil {
		return renameWindowResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"rename-window", "-t", in.WindowID, "--", formatArg(in.Name)}, in.WindowID, "window_name")
	if err != nil {
		return renameWindowResult{}, s.explainTargets(ctx, err, target{"window", in.WindowID})
	}
	res := renameWindowResult{WindowID: in.WindowID, Name: v[0], Note: storedNote(in.Name, v[0])}
	return res, nil
}
