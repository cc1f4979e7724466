package mcpserver

import (
	"context"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listSessionsParams struct{}

type listSessionsResult struct {
	Sessions []sessionRow `json:"sessions"`
	Note     string       `json:"note,omitempty"`
}

func listSessionsTool() tool {
	return &typedTool[listSessionsParams, listSessionsResult]{toolSpec: toolSpec{
		name:        "list_sessions",
		toolset:     Inspect,
		title:       "List sessions",
		description: "Every session: id, exact name, window count, attached clients.",
		capability:  metadataOnly,
	}, handle: (*server).listSessions}
}

func (s *server) listSessions(ctx context.Context, _ *mcp.CallToolRequest, _ listSessionsParams) (listSessionsResult, error) {
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true})
	if err != nil {
		return listSessionsResult{}, s.fail(err)
	}
	res := listSessionsResult{Sessions: make([]sessionRow, 0, len(snap.Sessions))}
	for _, ss := range snap.Sessions {
		res.Sessions = append(res.Sessions, toSessionRow(ss))
	}
	if len(res.Sessions) == 0 {
		res.Note = "the server has no sessions"
	}
	return res, nil
}
