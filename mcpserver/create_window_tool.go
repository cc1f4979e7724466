package mcpserver

import (
	"context"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type createWindowParams struct {
	sessionRef
	Name           string `json:"name,omitempty"`
	StartDirectory string `json:"startDirectory,omitempty" jsonschema:"absolute; omitted: the active pane's"`
}

type createWindowResult struct {
	WindowID  string `json:"windowId"`
	PaneID    string `json:"paneId"`
	SessionID string `json:"sessionId"`
	Index     int    `json:"index"`
	Name      string `json:"name"`
	Note      string `json:"note,omitempty"`
}

func createWindowTool() tool {
	return &typedTool[createWindowParams, createWindowResult]{toolSpec: toolSpec{
		name:    "create_window",
		toolset: Manage,
		title:   "Create window",
		description: "Adds a window running a shell to a session, not switching to it. " +
			`Example: {"sessionId":"$1","name":"logs"}`,
		capability: Capability{
			ProcessReach: ReachNone,
			Effects:      []Effect{EffectChange},
			Outputs:      []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{
				"sessionName":    litTarget,
				"name":           litFormat,
				"startDirectory": litFormat,
			},
		},
	}, handle: (*server).createWindow}
}

func (s *server) createWindow(ctx context.Context, _ *mcp.CallToolRequest, in createWindowParams) (createWindowResult, error) {
	t, err := s.sessionTarget(ctx, in.sessionRef)
	if err != nil {
		return createWindowResult{}, err
	}
	if in.Name != "" {
		if err := checkPrintableText("name", in.Name); err != nil {
			return createWindowResult{}, err
		}
	}
	if err := checkDirectory(in.StartDirectory); err != nil {
		return createWindowResult{}, err
	}
	// -d: the session's current window stays what a person sees.
	args := []string{"new-window", "-d", "-t", t + ":"}
	if in.Name != "" {
		args = append(args, "-n", formatArg(in.Name))
	}
	dir, err := s.startDirectory(ctx, in.StartDirectory, t+":")
	if err != nil {
		return createWindowResult{}, s.explainSession(ctx, err, in.sessionRef)
	}
	v, err := s.tmux.RunPrinting(ctx, append(args, dir...), "window_id", "pane_id", "session_id", "window_index", "window_name")
	if err != nil {
		return createWindowResult{}, s.explainSession(ctx, err, in.sessionRef)
	}
	res := createWindowResult{WindowID: v[0], PaneID: v[1], SessionID: v[2], Name: v[4]}
	if in.Name != "" {
		res.Note = storedNote(in.Name, res.Name)
	}
	res.Index, _ = strconv.Atoi(v[3])
	return res, nil
}
