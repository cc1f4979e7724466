package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type snapshotPaneParams struct {
	PaneID string `json:"paneId"`
}

// snapshotPaneResult is a pane's facts and its visible screen, read in one
// tmux invocation. Fields are plain (no descriptions) to keep tools/list
// small; get_pane_info documents the same facts.
type snapshotPaneResult struct {
	PaneID         string `json:"paneId"`
	WindowID       string `json:"windowId"`
	Width          int    `json:"width"`
	Height         int    `json:"height"`
	Active         bool   `json:"active"`
	CurrentCommand string `json:"currentCommand"`
	CurrentPath    string `json:"currentPath"`
	Title          string `json:"title"`
	PID            int    `json:"pid"`
	Dead           bool   `json:"dead"`
	Mode           string `json:"mode"`
	CursorX        int    `json:"cursorX"`
	CursorY        int    `json:"cursorY"`
	HistorySize    int    `json:"historySize"`
	ScrollPosition int    `json:"scrollPosition"`
	Caller         bool   `json:"caller"`
	Watched        bool   `json:"watched"`
	trimmed
	Note string `json:"note,omitempty"`
}

func snapshotPaneTool() tool {
	return &typedTool[snapshotPaneParams, snapshotPaneResult]{toolSpec: toolSpec{
		name:    "snapshot_pane",
		toolset: Inspect,
		title:   "Snapshot pane",
		description: "A pane's facts (command, path, title, mode, cursor, size) and screen, read at once. Scrollback: capture_pane. " +
			`Example: {"paneId":"%3"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTerminalContent, OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"paneId": litValidated},
		},
	}, handle: (*server).snapshotPane}
}

func (s *server) snapshotPane(ctx context.Context, _ *mcp.CallToolRequest, in snapshotPaneParams) (snapshotPaneResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return snapshotPaneResult{}, err
	}
	// list-panes -t %N lists the pane's window; the scroll position and the
	// capture follow in the same queue step, so all describe one moment.
	snap, outs, err := s.tmux.SnapshotWith(ctx, tmux.Want{Panes: true, Clients: true, Scope: tmux.PaneScope{PaneID: in.PaneID}},
		[]string{"display-message", "-p", "-t", in.PaneID, "#{scroll_position}"},
		[]string{"capture-pane", "-p", "-t", in.PaneID})
	if err != nil {
		return snapshotPaneResult{}, s.explain(ctx, err, "pane", in.PaneID)
	}
	rows := s.paneRows(snap) // in the order of snap.Panes
	i := slices.IndexFunc(snap.Panes, func(p tmux.Pane) bool { return p.ID == in.PaneID })
	if i < 0 {
		return snapshotPaneResult{}, fmt.Errorf("no pane %s on this server; call list_panes for the panes that exist", in.PaneID)
	}
	p, row := snap.Panes[i], rows[i]
	res := snapshotPaneResult{
		PaneID: p.ID, WindowID: p.WindowID, Width: p.Width, Height: p.Height,
		Active: p.Active, CurrentCommand: p.CurrentCommand, CurrentPath: p.CurrentPath, Title: p.Title,
		PID: p.PID, Dead: p.Dead, CursorX: p.CursorX, CursorY: p.CursorY, HistorySize: p.HistorySize,
		Caller: row.Caller, Watched: row.Watched,
		trimmed: s.budget.KeepNewest(tmux.SplitCapture(outs[1])),
	}
	res.ScrollPosition, _ = strconv.Atoi(strings.TrimSpace(outs[0]))
	if p.InMode {
		res.Mode = p.Mode
		if res.Mode == "" {
			res.Mode = "unknown"
		}
	}
	if res.DroppedLines > 0 || res.DroppedChars > 0 {
		res.Note = "the top of the screen was left out to stay within the read budget"
	}
	return res, nil
}
