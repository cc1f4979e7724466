package mcpserver

import (
	"context"
	"fmt"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type capturePaneParams struct {
	PaneID      string `json:"paneId"`
	Start       *int   `json:"start,omitempty" jsonschema:"first line: 0 = screen top, -100 = 100 lines up"`
	End         *int   `json:"end,omitempty"`
	JoinWrapped bool   `json:"joinWrapped,omitempty"`
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
		description: "A pane's screen, or its scrollback from start to end (the newest lines within the read budget). To follow a pane: capture_since. " +
			`Example: {"paneId":"%3","start":-200}`,
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
	// Ask tmux only for the rows the budget can return: the newest rows of
	// the range, widened only while they do not fill the budget (a
	// 100,000-line range reads a few hundred rows, not 100,000).
	opt := tmux.CaptureOptions{Start: in.Start, End: in.End, JoinWrapped: in.JoinWrapped}
	var t trimmed
	skipped := 0
	for window := s.budget.Lines + 1; ; window *= 4 {
		o := opt
		skipped = 0
		if lo, ok := captureWindow(in.Start, in.End, window); ok {
			o.Start, skipped = &lo, lo-*in.Start
		}
		out, err := s.tmux.Capture(ctx, in.PaneID, o)
		if err != nil {
			return capturePaneResult{}, s.explain(ctx, err, "pane", in.PaneID)
		}
		t = s.budget.KeepNewest(tmux.SplitCapture(out))
		if skipped == 0 || t.DroppedLines > 0 || t.DroppedChars > 0 {
			break // the whole range was read, or older rows would be dropped anyway
		}
	}
	t.DroppedLines += skipped
	res := capturePaneResult{PaneID: in.PaneID, trimmed: t}
	switch {
	case skipped > 0:
		res.Note = fmt.Sprintf("older text was left out to stay within the read budget; the oldest %d rows of the range were not read, so droppedChars does not count them; narrow start/end to read them", skipped)
	case res.DroppedLines > 0 || res.DroppedChars > 0:
		res.Note = "older text was left out to stay within the read budget; narrow start/end to read it"
	}
	return res, nil
}

// captureWindow is the first row of the newest window rows of the range
// start..end (nil end: the bottom of the screen, which is always read
// whole), and false when the window holds the whole range.
func captureWindow(start, end *int, window int) (int, bool) {
	if start == nil {
		return 0, false // from the top of the screen: the screen only
	}
	lo := -window // window rows of scrollback above the screen
	if end != nil && *end < 0 {
		lo = *end - window + 1
	}
	if lo <= *start {
		return 0, false
	}
	return lo, true
}
