package mcpserver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type moveWindowParams struct {
	WindowID  string `json:"windowId"`
	SessionID string `json:"sessionId"`
	Index     *int   `json:"index,omitempty" jsonschema:"default: first free"`
}

type moveWindowResult struct {
	WindowID  string `json:"windowId"`
	SessionID string `json:"sessionId"`
	Index     int    `json:"index"`
}

func moveWindowTool() tool {
	return &typedTool[moveWindowParams, moveWindowResult]{toolSpec: toolSpec{
		name:    "move_window",
		toolset: Manage,
		title:   "Move window",
		description: "Moves a window to a session; its panes keep running, with their ids. " +
			`Example: {"windowId":"@2","sessionId":"$1"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).moveWindow}
}

func (s *server) moveWindow(ctx context.Context, _ *mcp.CallToolRequest, in moveWindowParams) (moveWindowResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return moveWindowResult{}, err
	}
	if err := checkID("session", in.SessionID); err != nil {
		return moveWindowResult{}, err
	}
	dst := in.SessionID + ":"
	if in.Index != nil {
		if *in.Index < 0 || *in.Index > 99999 {
			return moveWindowResult{}, fmt.Errorf("index %d is out of range; give 0 to 99999, or leave it out", *in.Index)
		}
		dst += strconv.Itoa(*in.Index)
	}
	// -d: the moved window does not become the destination's current one.
	v, err := s.tmux.RunThenRead(ctx, []string{"move-window", "-d", "-s", in.WindowID, "-t", dst}, in.WindowID, "session_id", "window_index")
	if err != nil {
		return moveWindowResult{}, s.explainTargets(ctx, err, target{"window", in.WindowID}, target{"session", in.SessionID})
	}
	res := moveWindowResult{WindowID: in.WindowID, SessionID: v[0]}
	res.Index, _ = strconv.Atoi(v[1])
	return res, nil
}
