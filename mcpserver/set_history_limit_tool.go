package mcpserver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type setHistoryLimitParams struct {
	SessionID string `json:"sessionId,omitempty" jsonschema:"omitted: every session"`
	Lines     int    `json:"lines"`
}

type setHistoryLimitResult struct {
	Scope string `json:"scope"`
	Lines int    `json:"lines"`
}

// maxHistoryLimit bounds the scrollback a tool may ask tmux to keep per
// pane.
const maxHistoryLimit = 1000000

func setHistoryLimitTool() tool {
	return &typedTool[setHistoryLimitParams, setHistoryLimitResult]{toolSpec: toolSpec{
		name:    "set_history_limit",
		toolset: Manage,
		title:   "Set history limit",
		description: "Sets the scrollback lines kept by panes created afterwards. " +
			`Example: {"lines":100000}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"lines": litValidated},
		},
	}, handle: (*server).setHistoryLimit}
}

func (s *server) setHistoryLimit(ctx context.Context, _ *mcp.CallToolRequest, in setHistoryLimitParams) (setHistoryLimitResult, error) {
	if in.Lines < 0 || in.Lines > maxHistoryLimit {
		return setHistoryLimitResult{}, fmt.Errorf("lines %d is out of range; give 0 to %d", in.Lines, maxHistoryLimit)
	}
	scope, err := s.setSessionOption(ctx, in.SessionID, "history-limit", strconv.Itoa(in.Lines))
	if err != nil {
		return setHistoryLimitResult{}, err
	}
	n, err := strconv.Atoi(scope.value)
	return setHistoryLimitResult{Scope: scope.name, Lines: n}, err
}
