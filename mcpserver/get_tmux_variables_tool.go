package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const maxVariableNames = 32

type tmuxVariablesParams struct {
	Names  []string `json:"names"`
	Target string   `json:"target,omitempty"`
}

type tmuxVariablesResult struct {
	Target    string            `json:"target"`
	Variables map[string]string `json:"variables" jsonschema:"name to value; unknown names give empty"`
}

func getTmuxVariablesTool() tool {
	return &typedTool[tmuxVariablesParams, tmuxVariablesResult]{toolSpec: toolSpec{
		name:    "get_tmux_variables",
		toolset: Inspect,
		title:   "Get tmux variables",
		description: "Values of tmux format variables (no #{} expressions) for a pane, window or session. " +
			`Example: {"names":["pane_current_path"],"target":"%3"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTmuxMetadata, OutputConfiguredCommand},
			InputLiteralization: map[string]Literalization{"names": litValidated, "target": litValidated},
		},
	}, handle: (*server).tmuxVariables}
}

func (s *server) tmuxVariables(ctx context.Context, _ *mcp.CallToolRequest, in tmuxVariablesParams) (tmuxVariablesResult, error) {
	if len(in.Names) == 0 || len(in.Names) > maxVariableNames {
		return tmuxVariablesResult{}, fmt.Errorf("give 1 to %d names; got %d", maxVariableNames, len(in.Names))
	}
	for _, n := range in.Names {
		if !tmux.ValidVariableName(n) {
			return tmuxVariablesResult{}, fmt.Errorf("%q is not a format variable name: use a plain name such as pane_current_path (lower-case letters, digits, _); formats like #{...} and #(...) are never evaluated", n)
		}
	}
	kind := ""
	switch {
	case in.Target == "":
	case strings.HasPrefix(in.Target, "%"):
		kind = "pane"
	case strings.HasPrefix(in.Target, "@"):
		kind = "window"
	case strings.HasPrefix(in.Target, "$"):
		kind = "session"
	default:
		return tmuxVariablesResult{}, fmt.Errorf("target %q is not a pane, window or session id (%%3, @2, $1)", in.Target)
	}
	if kind != "" {
		if err := checkID(kind, in.Target); err != nil {
			return tmuxVariablesResult{}, err
		}
	}
	// display-message falls back to another target when -t names none
	// that exists, so the target's own id is read first and compared.
	names := in.Names
	if kind != "" {
		names = append([]string{kind + "_id"}, names...)
	}
	vals, err := s.tmux.Displayed(ctx, in.Target, names)
	if err != nil {
		return tmuxVariablesResult{}, s.fail(err)
	}
	if kind != "" {
		if vals[0] != in.Target {
			return tmuxVariablesResult{}, fmt.Errorf("no %s %s on this server; call list_%ss for those that exist", kind, in.Target, kind)
		}
		vals = vals[1:]
	}
	res := tmuxVariablesResult{Target: in.Target, Variables: map[string]string{}}
	for i, n := range in.Names {
		res.Variables[n] = vals[i]
	}
	return res, nil
}
