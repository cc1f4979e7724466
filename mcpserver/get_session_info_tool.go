package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type sessionInfoParams struct {
	SessionID   string `json:"sessionId,omitempty"`
	SessionName string `json:"sessionName,omitempty" jsonschema:"or exact name"`
}

type sessionInfoResult struct {
	Session sessionRow  `json:"session"`
	Windows []windowRow `json:"windows"`
}

func getSessionInfoTool() tool {
	return &typedTool[sessionInfoParams, sessionInfoResult]{toolSpec: toolSpec{
		name:    "get_session_info",
		toolset: Inspect,
		title:   "Session info",
		description: "One session and its windows. " +
			`Example: {"sessionId":"$0"}`,
		capability: metadataOnly,
	}, handle: (*server).sessionInfo}
}

func (s *server) sessionInfo(ctx context.Context, _ *mcp.CallToolRequest, in sessionInfoParams) (sessionInfoResult, error) {
	if (in.SessionID == "") == (in.SessionName == "") {
		return sessionInfoResult{}, errors.New("give exactly one of sessionId ($1) or sessionName; call list_sessions to see both")
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true, Windows: true})
	if err != nil {
		return sessionInfoResult{}, s.fail(err)
	}
	for _, ss := range snap.Sessions {
		if ss.ID == in.SessionID || in.SessionID == "" && ss.Name == in.SessionName {
			res := sessionInfoResult{Session: toSessionRow(ss), Windows: []windowRow{}}
			for _, w := range snap.Windows {
				if w.SessionID == ss.ID {
					res.Windows = append(res.Windows, toWindowRow(w))
				}
			}
			return res, nil
		}
	}
	what := "id " + in.SessionID
	if in.SessionID == "" {
		what = fmt.Sprintf("named %q", in.SessionName)
	}
	return sessionInfoResult{}, fmt.Errorf("no session %s on this server; call list_sessions for the %d that exist", what, len(snap.Sessions))
}
