package mcpserver

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type showHooksParams struct {
	Scope  string `json:"scope" jsonschema:"session, window or pane"`
	Target string `json:"target,omitempty" jsonschema:"omitted: global"`
}

type hookRow struct {
	Name    string `json:"name" jsonschema:"hook[index]"`
	Command string `json:"command"`
}

type showHooksResult struct {
	Hooks        []hookRow `json:"hooks" jsonschema:"hooks that are set; unset ones are left out"`
	DroppedHooks int       `json:"droppedHooks"`
	Note         string    `json:"note,omitempty"`
}

func showHooksTool() tool {
	return &typedTool[showHooksParams, showHooksResult]{toolSpec: toolSpec{
		name:    "show_hooks",
		toolset: Inspect,
		title:   "Show hooks",
		description: "The hooks set at a scope and the commands they run. " +
			`Example: {"scope":"pane","target":"%3"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputConfiguredCommand},
			InputLiteralization: map[string]Literalization{"target": litValidated},
		},
	}, handle: (*server).showHooks}
}

func (s *server) showHooks(ctx context.Context, _ *mcp.CallToolRequest, in showHooksParams) (showHooksResult, error) {
	args, kind, err := scopeArgs("show-hooks", in.Scope, in.Target, false)
	if err != nil {
		return showHooksResult{}, err
	}
	out, err := s.tmux.Run(ctx, args...)
	if err != nil {
		if kind != "" {
			return showHooksResult{}, s.explain(ctx, err, kind, in.Target)
		}
		return showHooksResult{}, s.fail(err)
	}
	res := showHooksResult{Hooks: []hookRow{}}
	chars := s.budget.Chars
	for _, line := range strings.Split(out, "\n") {
		name, cmd, ok := strings.Cut(line, " ")
		if !ok || !strings.HasSuffix(name, "]") {
			continue // a hook that is not set: tmux lists its bare name
		}
		n := utf8.RuneCountInString(line)
		if len(res.Hooks) >= s.budget.Lines || n > chars {
			res.DroppedHooks++
			continue
		}
		chars -= n
		res.Hooks = append(res.Hooks, hookRow{Name: name, Command: cmd})
	}
	if res.DroppedHooks > 0 {
		res.Note = "some hooks were left out to stay within the read budget"
	}
	return res, nil
}
