package mcpserver

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type listRunsParams struct{}

type runRow struct {
	Handle     string `json:"handle"`
	Tool       string `json:"tool"`
	PaneID     string `json:"paneId"`
	Command    string `json:"command"`
	Started    string `json:"started"`
	State      string `json:"state"`
	ExitStatus *int   `json:"exitStatus"`
	started    time.Time
}

type listRunsResult struct {
	Runs []runRow `json:"runs"`
}

func listRunsTool() tool {
	return &typedTool[listRunsParams, listRunsResult]{toolSpec: toolSpec{
		name:    "list_runs",
		toolset: Execute,
		title:   "List runs",
		description: "Runs this server started, in flight or recently ended, oldest first: handle, tool, pane, command's first line, state, exit status. " +
			`Example: {}`,
		capability: Capability{
			ProcessReach: ReachNone,
			Effects:      []Effect{EffectObserve},
			Outputs:      []Output{OutputTmuxMetadata},
			// No arguments.
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).listRuns}
}

func (s *server) listRuns(context.Context, *mcp.CallToolRequest, listRunsParams) (listRunsResult, error) {
	res := listRunsResult{Runs: []runRow{}}
	for _, r := range s.shell.List() {
		res.Runs = append(res.Runs, runRow{Handle: r.Handle, Tool: "run_shell_command", PaneID: r.Pane, Command: r.Command,
			Started: r.Started.UTC().Format(time.RFC3339), State: r.State, ExitStatus: r.ExitStatus, started: r.Started})
	}
	if s.runner != nil {
		for _, v := range s.runner.Backgrounds() {
			row := runRow{Handle: v.Handle, Tool: "tmux_run_start", PaneID: v.Pane, Command: v.Command,
				Started: v.Started.UTC().Format(time.RFC3339), State: backgroundState(v), started: v.Started}
			if c := v.Completion; c != nil && !c.Signaled {
				row.ExitStatus = &c.Status
			}
			res.Runs = append(res.Runs, row)
		}
	}
	slices.SortStableFunc(res.Runs, func(a, b runRow) int { return a.started.Compare(b.started) })
	return res, nil
}
