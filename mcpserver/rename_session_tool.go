package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type renameSessionParams struct {
	sessionRef
	Name string `json:"name"`
}

type renameSessionResult struct {
	SessionID string `json:"sessionId"`
	Name      string `json:"name"`
	Note      string `json:"note,omitempty"`
}

func renameSessionTool() tool {
	return &typedTool[renameSessionParams, renameSessionResult]{toolSpec: toolSpec{
		name:    "rename_session",
		toolset: Manage,
		title:   "Rename session",
		description: "Renames a session; answers the name tmux stored (: and . become _). " +
			`Example: {"sessionId":"$1","name":"build"}`,
		capability: Capability{
			ProcessReach: ReachNone,
			Effects:      []Effect{EffectChange},
			Outputs:      []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{
				"sessionName": litTarget,
				"name":        litFormat,
			},
		},
	}, handle: (*server).renameSession}
}

func (s *server) renameSession(ctx context.Context, _ *mcp.CallToolRequest, in renameSessionParams) (renameSessionResult, error) {
	if err := checkName("name", in.Name); err != nil {
		return renameSessionResult{}, err
	}
	id, err := s.resolveSession(ctx, in.sessionRef)
	if err != nil {
		return renameSessionResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"rename-session", "-t", id, "--", formatArg(in.Name)}, id, "session_name")
	if err != nil {
		var te *tmux.Error
		if errors.As(err, &te) && strings.Contains(te.Stderr, "duplicate session") {
			return renameSessionResult{}, fmt.Errorf("a session named %q exists already; pick another name", in.Name)
		}
		return renameSessionResult{}, s.explainTargets(ctx, err, target{"session", id})
	}
	return renameSessionResult{SessionID: id, Name: v[0], Note: storedNote(in.Name, v[0])}, nil
}
