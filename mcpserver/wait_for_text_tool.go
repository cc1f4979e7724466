package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/libtmux/libtmux-mcp/internal/cursor"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type waitForTextParams struct {
	PaneID    string `json:"paneId"`
	Pattern   string `json:"pattern"`
	Regex     bool   `json:"regex,omitempty" jsonschema:"pattern is RE2"`
	Cursor    string `json:"cursor,omitempty"`
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
}

type waitForTextResult struct {
	Outcome            string   `json:"outcome"`
	Match              string   `json:"match,omitempty"`
	Already            bool     `json:"already,omitempty"`
	Output             []string `json:"output"`
	Screen             []string `json:"screen"`
	Cursor             string   `json:"cursor,omitempty"`
	EffectiveTimeoutMs int64    `json:"effectiveTimeoutMs"`
	Note               string   `json:"note,omitempty"`
}

func waitForTextTool() tool {
	return &typedTool[waitForTextParams, waitForTextResult]{toolSpec: toolSpec{
		name:    "wait_for_text",
		blocks:  true,
		toolset: Execute,
		title:   "Wait for text",
		description: "Waits until a pane shows the text (your own commands: run_shell_command). " +
			"Text already shown matches at once (already:true); with a capture_since cursor, only newer output. " +
			`Example: {"paneId":"%3","pattern":"listening on"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).waitForText}
}

// lookOverlap is how many rows above the cursor a look reads again.
const lookOverlap = 8

// maxPatternBytes bounds a wait_for_text pattern.
const maxPatternBytes = 4096

func (s *server) waitForText(ctx context.Context, req *mcp.CallToolRequest, in waitForTextParams) (waitForTextResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return waitForTextResult{}, err
	}
	if in.Pattern == "" || len(in.Pattern) > maxPatternBytes {
		return waitForTextResult{}, fmt.Errorf("pattern must be 1 to %d bytes", maxPatternBytes)
	}
	find := func(text string) string {
		if strings.Contains(text, in.Pattern) {
			return in.Pattern
		}
		return ""
	}
	if in.Regex {
		re, err := regexp.Compile("(?m)" + in.Pattern)
		if err != nil {
			return waitForTextResult{}, fmt.Errorf("pattern is not a valid RE2 regular expression: %v; or pass regex:false to match it as plain text", err)
		}
		find = func(text string) string {
			if loc := re.FindStringIndex(text); loc != nil {
				return text[loc[0]:loc[1]]
			}
			return ""
		}
	}
	if s.live == nil {
		return waitForTextResult{}, errors.New("no_stream: wait_for_text wakes on tmux control-mode output, which LIBTMUX_MCP_LIVE=0 forbids; use run_shell_command for your own commands, or capture_since to read what is new")
	}
	var after *cursor.Stream // match only output after it
	if in.Cursor != "" {
		c, isStream, err := cursor.ParseStream(in.PaneID, in.Cursor)
		if err != nil {
			return waitForTextResult{}, err
		}
		if !isStream {
			return waitForTextResult{}, fmt.Errorf("cursor %q marks a place on the screen, not in the pane's output (capture_since gives such cursors when this server does not watch the pane): call capture_since without cursor, then wait_for_text with the cursor it answers", in.Cursor)
		}
		after = &c
	}
	pos, err := s.panePosition(ctx, in.PaneID)
	if err != nil {
		return waitForTextResult{}, s.explain(ctx, err, "pane", in.PaneID)
	}
	start := pos.CursorRow()

	wctx, w := s.startWait(ctx, req, in.TimeoutMs, "wait_for_text")
	defer w.end()
	res := waitForTextResult{EffectiveTimeoutMs: w.ms(), Output: []string{}, Screen: []string{}}

	// The pane's view, when there is one, holds every line the pane
	// finished during the wait: a match that scrolled past between two
	// looks at the screen is still found there.
	var view *live.View
	var seen, startLine uint64
	var hooked atomic.Pointer[string] // a match found as a line finished
	// Each line is also searched as it finishes, so a flood that pushes
	// it out of the kept lines before this wait looks cannot hide it. The
	// hook is in place before a new view's connection is visible.
	var remove func()
	var ahead bool
	hook := func(l *live.Lines) {
		seen, startLine = l.Newest(), l.Newest()
		if after != nil {
			ahead = after.Line > l.Newest()
			seen, startLine = after.Line, after.Line
		}
		remove = l.OnLine(func(_ uint64, line string) {
			if hooked.Load() == nil {
				if m := find(s.shell.DiscountTyped(in.PaneID, line)); m != "" {
					hooked.Store(&m)
				}
			}
		})
	}
	if v, release, err := s.paneView(ctx, in.PaneID, 0, hook, &pos); err == nil {
		view = v
		defer release()
		defer v.Read(func(*live.Lines) { remove() })
	} else if remove != nil {
		remove() // the view failed: its lines are gone anyway
	}
	if after != nil {
		switch {
		case view == nil || after.Epoch != view.Epoch():
			return waitForTextResult{}, fmt.Errorf("cursor %q is from an earlier watch of pane %s (this server stops watching a pane %s after the last capture_since, run_shell_command or wait_for_text for it, or when its connection ends), so what was printed since is unknown: call capture_since without cursor, then wait_for_text with the cursor it answers", in.Cursor, in.PaneID, s.viewKeep())
		case ahead:
			return waitForTextResult{}, fmt.Errorf("cursor %q is ahead of the pane's output; omit cursor, or take a fresh one from capture_since", in.Cursor)
		}
	}
	// The watch after the view: the view's hook is in place before this
	// wait's connection can be seen.
	watch := s.watchPane(wctx, pos.SessionID, in.PaneID, true)
	defer func() { watch.Stop() }()
	findStream := func() string {
		if view == nil {
			return ""
		}
		if m := hooked.Load(); m != nil {
			return *m
		}
		var text string
		view.Read(func(l *live.Lines) {
			// From the last line already searched (a pattern may span it
			// and the next), through the unfinished line.
			lines := l.Get(max(seen, startLine+1), l.Newest())
			text = strings.Join(append(lines, l.Unfinished()), "\n")
			seen = l.Newest()
		})
		return find(s.shell.DiscountTyped(in.PaneID, text))
	}

	var last *tmux.Rows
	// Each look reads the screen and what scrolled past it since the last
	// look (with a few rows of overlap, for lines that wrapped), not all
	// the output since the wait began again.
	searched := start
	look := func() (match string, gone bool) {
		from := min(searched, pos.HistorySize)
		rows, joined, err := s.captureRows(ctx, view, in.PaneID, from, pos, true)
		for try := 0; err == nil && rows.First > from && try < 3; try++ {
			// Output scrolled the grid since pos: read again from the rows
			// the first read skipped, by the capture's own position.
			rows, joined, err = s.captureRows(ctx, view, in.PaneID, from-cursor.Margin<<try, rows.Position, true)
		}
		if err != nil {
			return "", paneMissing(err)
		}
		pos, last = rows.Position, &rows
		searched = max(searched, rows.CursorRow()-lookOverlap)
		if rows.Dead {
			return "", true
		}
		return find(s.shell.DiscountTyped(in.PaneID, strings.Join(joined, "\n"))), false
	}
	// With a cursor only the output after it can match: the screen shows
	// what came before too.
	if after != nil {
		grid := look
		look = func() (string, bool) {
			_, gone := grid()
			return "", gone
		}
	}
	outcome := ""
	if m := findStream(); m != "" {
		outcome, res.Match = outcomeMatched, m
		look() // for the screen
	} else if m, gone := look(); m != "" {
		outcome, res.Match, res.Already = outcomeMatched, m, true
	} else if gone {
		outcome = outcomePaneDied
	}
	for outcome == "" {
		select {
		case <-watch.C:
		case <-watch.Ended:
			// The session's connection ended: look once more, and watch
			// anew (a timer when no connection can be opened).
			watch.Stop()
			watch = s.watchPane(wctx, pos.SessionID, in.PaneID, true)
		case <-wctx.Done():
			outcome = s.ended(wctx, ctx)
			continue
		}
		if m := findStream(); m != "" {
			outcome, res.Match = outcomeMatched, m
			look() // for the screen
		} else if m, gone := look(); m != "" {
			outcome, res.Match = outcomeMatched, m
		} else if gone {
			outcome = outcomePaneDied
		}
	}
	res.Outcome = outcome
	if outcome == outcomeCancelled && ctx.Err() != nil && last == nil {
		return res, nil
	}
	if last != nil && last.First > start && ctx.Err() == nil {
		// The last look started after the wait's first row: read the
		// output since the wait began once more, for the answer.
		if rows, _, err := s.captureRows(ctx, view, in.PaneID, start, last.Position, false); err == nil {
			last = &rows
		}
	}
	if last != nil {
		end := min(len(last.Lines), last.CursorRow()-last.First+1)
		if i := start - last.First; i >= 0 && i < end {
			res.Output = splitCaptureKeep(last.Lines[i:end])
		}
		if i := last.HistorySize - last.First; i >= 0 && i < len(last.Lines) {
			res.Screen = splitCaptureKeep(last.Lines[i:])
		}
		o := s.budget.KeepNewest(res.Output)
		sc := s.budget.KeepNewest(res.Screen)
		res.Output, res.Screen = o.Lines, sc.Lines
		if a, ok := cursor.AnchorAt(in.PaneID, *last); ok {
			res.Cursor = a.String()
		}
	}
	var lostNote string
	if view != nil && ctx.Err() == nil {
		// The output since the wait began, from the view: exact. A round
		// trip first, so the view holds what the last look saw.
		view.Position(ctx)
		var lines []string
		var missed uint64
		view.Read(func(l *live.Lines) {
			from := startLine + 1
			if o := l.Oldest(); from < o {
				missed, from = o-from, o
			}
			lines = l.Get(from, l.Newest())
			if u := l.Unfinished(); u != "" {
				lines = append(lines, u)
			}
			res.Cursor = cursor.Stream{Pane: in.PaneID, Epoch: view.Epoch(), Line: l.Newest()}.String()
		})
		// The view stays after the answer, as capture_since's does, so that
		// this cursor goes on counting for the next call.
		view.Keep(s.viewKeep())
		res.Output = s.budget.KeepNewest(lines).Lines
		if res.Output == nil {
			res.Output = []string{}
		}
		if missed > 0 {
			lostNote = fmt.Sprintf("%d lines of output left the lines kept for the pane before the answer and are not in output", missed)
		}
	}
	switch {
	case res.Already:
		res.Note = "this text was on the screen when the wait began, so it may be from an earlier command: to wait for new output only, pass cursor (capture_since, run_shell_command and wait_for_text answer one)"
	case outcome == outcomeTimedOut:
		res.Note = fmt.Sprintf("%q did not appear within %d ms; wait again, or pass cursor to capture_since to read what is new", in.Pattern, w.ms())
	case outcome == outcomePaneDied:
		res.Note = fmt.Sprintf("pane %s died or its server stopped; waiting again cannot match", in.PaneID)
	case outcome == outcomeCancelled:
		res.Note = "the wait was cancelled"
	}
	if lostNote != "" {
		res.Note = strings.TrimPrefix(res.Note+"; "+lostNote, "; ")
	}
	return res, nil
}

// splitCaptureKeep drops the blank rows below the last text.
func splitCaptureKeep(rows []string) []string {
	out := append([]string{}, rows...)
	for len(out) > 0 && strings.TrimRight(out[len(out)-1], " ") == "" {
		out = out[:len(out)-1]
	}
	return out
}
