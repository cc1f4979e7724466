package mcpserver

import (
	"context"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type capturePaneParams struct {
	PaneID      string `json:"paneId"`
	Start       *int   `json:"start,omitempty" jsonschema:"first line: 0 = screen top, -100 = 100 lines up"`
	End         *int   `json:"end,omitempty" jsonschema:"last line; omitted = bottom"`
	JoinWrapped bool   `json:"joinWrapped,omitempty" jsonschema:"join wrapped lines"`
}

type capturePaneResult struct {
	PaneID string `json:"paneId"`
	trimmed
	Note string `json:"note,omitempty"`
}

func capturePaneTool() tool {
	return &typedTool[capturePaneParams, capturePaneResult]{toolSpec: toolSpec{
		name:    "capture_pane",
		toolset: Inspect,
		title:   "Capture pane",
		description: "A pane's screen, or its scrollback from start to end; the newest lines within the read budget. To follow a pane, capture_since. " +
			`Example: {"paneId":"%3","start":-200}.`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).capturePane}
}

func (s *server) capturePane(ctx context.Context, _ *mcp.CallToolRequest, in capturePaneParams) (capturePaneResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return capturePaneResult{}, err
	}
	out, err := s.tmux.Capture(ctx, in.PaneID, tmux.CaptureOptions{Start: in.Start, End: in.End, JoinWrapped: in.JoinWrapped})
	if err != nil {
		return capturePaneResult{}, s.explain(ctx, err, "pane", in.PaneID)
	}
	res := capturePaneResult{PaneID: in.PaneID, trimmed: s.budget.keepNewest(splitCapture(out))}
	if res.DroppedLines > 0 || res.DroppedChars > 0 {
		res.Note = "older text was left out to stay within the read budget; narrow start/end to read it"
	}
	return res, nil
}

// splitCapture splits capture-pane output into lines without the blank
// rows below the last text.
func splitCapture(out string) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for len(lines) > 0 && strings.TrimRight(lines[len(lines)-1], " ") == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
