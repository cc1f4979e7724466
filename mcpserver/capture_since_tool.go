package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type captureSinceParams struct {
	PaneID string `json:"paneId"`
	Cursor string `json:"cursor,omitempty" jsonschema:"from the last answer; omitted = the screen"`
	WaitMs *int64 `json:"waitMs,omitempty" jsonschema:"wait this long for new lines"`
}

type captureSinceResult struct {
	PaneID string `json:"paneId"`
	trimmed
	Cursor             string `json:"cursor"`
	Continuous         bool   `json:"continuous"`
	MissedLines        int    `json:"missedLines"`
	Streaming          bool   `json:"streaming"`
	EffectiveTimeoutMs int64  `json:"effectiveTimeoutMs"`
	Note               string `json:"note,omitempty"`
}

func captureSinceTool() tool {
	return &typedTool[captureSinceParams, captureSinceResult]{toolSpec: toolSpec{
		name:    "capture_since",
		blocks:  true,
		toolset: Inspect,
		title:   "Capture since cursor",
		description: "Only the lines a pane finished since your cursor, and the next cursor (omit it at first); waitMs waits for some. continuous:false: cleared or overran. " +
			`Example: {"paneId":"%3","cursor":"lc1…","waitMs":10000}.`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).captureSince}
}

func (s *server) captureSince(ctx context.Context, req *mcp.CallToolRequest, in captureSinceParams) (captureSinceResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return captureSinceResult{}, err
	}
	a := anchor{pane: in.PaneID, row: -1}
	if in.Cursor != "" {
		var err error
		if a, err = parseCursor(in.PaneID, in.Cursor); err != nil {
			return captureSinceResult{}, err
		}
	}
	res := captureSinceResult{PaneID: in.PaneID, Streaming: s.live != nil}
	if in.WaitMs != nil && *in.WaitMs > 0 && s.live != nil {
		res.EffectiveTimeoutMs = s.effectiveTimeout(in.WaitMs).Milliseconds() // also when it answers at once
	}
	got, err := s.readSince(ctx, in.PaneID, a, nil)
	if err != nil {
		return captureSinceResult{}, s.explain(ctx, err, "pane", in.PaneID)
	}
	waiting := in.WaitMs != nil && *in.WaitMs > 0 && in.Cursor != ""
	if waiting && s.live == nil {
		res.Note = "LIBTMUX_MCP_LIVE=0 forbids the control-mode connection that waiting needs, so this answered at once; call again later"
	}
	if waiting && s.live != nil && len(got.lines) == 0 && got.continuous {
		wctx, w := s.startWait(ctx, req, in.WaitMs, "capture_since")
		defer w.end()
		res.EffectiveTimeoutMs = w.ms()
		watch := s.watchPane(wctx, got.pos.SessionID, in.PaneID, true)
		defer func() { watch.stop() }()
		res.Streaming = watch.stream
		pos := got.pos
	wait:
		for {
			select {
			case <-watch.wake:
			case <-watch.ended:
				// The connection ended: read once more, and watch anew.
				watch.stop()
				watch = s.watchPane(wctx, got.pos.SessionID, in.PaneID, true)
			case <-wctx.Done():
				if s.ended(wctx, ctx) == outcomeCancelled {
					res.Note = "cancelled before new lines arrived"
				}
				break wait
			}
			next, err := s.readSince(ctx, in.PaneID, a, &pos)
			if err != nil {
				return captureSinceResult{}, s.explain(ctx, err, "pane", in.PaneID)
			}
			got, pos = next, next.pos
			if len(got.lines) > 0 || !got.continuous || got.pos.Dead {
				break
			}
		}
	}
	res.trimmed = s.budget.keepNewest(got.lines)
	res.Cursor = got.next.String()
	res.Continuous = got.continuous
	res.MissedLines = got.missed
	var notes []string
	if res.Note != "" {
		notes = append(notes, res.Note)
	}
	if !got.continuous {
		if got.overrun {
			notes = append(notes, fmt.Sprintf("the pane printed more than its history (history-limit) keeps since your cursor: lines were lost before this read (at least %d), so these do not follow the last ones you saw", got.missed))
		} else {
			notes = append(notes, "the pane was cleared or redrawn since your cursor; these lines do not follow the last ones you saw")
		}
	}
	if res.DroppedLines > 0 {
		notes = append(notes, "older new lines were left out to stay within the read budget")
	}
	if got.pos.Dead {
		notes = append(notes, "the pane is dead: no more lines will come")
	}
	res.Note = strings.Join(notes, "; ")
	return res, nil
}
