package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/cursor"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type captureSinceParams struct {
	PaneID string `json:"paneId"`
	Cursor string `json:"cursor,omitempty"`
	WaitMs *int64 `json:"waitMs,omitempty"`
}

type captureSinceResult struct {
	PaneID string `json:"paneId"`
	trimmed
	Cursor      string `json:"cursor"`
	Continuous  bool   `json:"continuous"`
	MissedLines int    `json:"missedLines"`
	Streaming   bool   `json:"streaming"`
	// Unfinished is the line the pane is writing now, after the last finished one: a prompt, a
	// question waiting for its answer. Not counted by the cursor: it comes in lines once it ends.
	Unfinished         string `json:"unfinished,omitempty"`
	EffectiveTimeoutMs int64  `json:"effectiveTimeoutMs"`
	Note               string `json:"note,omitempty"`
}

func captureSinceTool() tool {
	return &typedTool[captureSinceParams, captureSinceResult]{toolSpec: toolSpec{
		name:    "capture_since",
		blocks:  true,
		toolset: Inspect,
		title:   "Capture since cursor",
		description: "The lines a pane finished since your cursor (omitted: the screen), and the next cursor; waitMs waits for some. continuous:false: cleared or overran. unfinished: the line still being written (a question, a prompt). " +
			`Example: {"paneId":"%3","cursor":"lc1…","waitMs":10000}`,
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
	if s.live != nil {
		res, err, ok := s.captureSinceStream(ctx, req, in)
		if ok {
			return res, err
		}
	}
	return s.captureSinceGrid(ctx, req, in)
}

// captureSinceGrid answers from the pane's grid alone, anchoring on rows:
// the way without a view (LIBTMUX_MCP_LIVE=0, or no connection could be
// opened), where what the pane printed between two calls is not known.
func (s *server) captureSinceGrid(ctx context.Context, req *mcp.CallToolRequest, in captureSinceParams) (captureSinceResult, error) {
	a := cursor.Anchor{Pane: in.PaneID, Row: -1}
	if in.Cursor != "" {
		var err error
		// A cursor of a view (control mode was on) starts again from the
		// screen; a grid cursor goes on from its anchor.
		_, isStream, perr := cursor.ParseStream(in.PaneID, in.Cursor)
		if perr != nil {
			return captureSinceResult{}, perr
		}
		if !isStream {
			if a, err = cursor.ParseAnchor(in.PaneID, in.Cursor); err != nil {
				return captureSinceResult{}, err
			}
		}
	}
	res := captureSinceResult{PaneID: in.PaneID, Streaming: s.live != nil}
	if in.WaitMs != nil && *in.WaitMs > 0 && s.live != nil {
		res.EffectiveTimeoutMs = s.effectiveTimeout(in.WaitMs).Milliseconds() // also when it answers at once
	}
	got, err := cursor.ReadSince(ctx, s.tmux, in.PaneID, a, nil, s.budget.Lines)
	if err != nil {
		return captureSinceResult{}, s.explain(ctx, err, "pane", in.PaneID)
	}
	waiting := in.WaitMs != nil && *in.WaitMs > 0 && in.Cursor != ""
	if waiting && s.live == nil {
		res.Note = "LIBTMUX_MCP_LIVE=0 forbids the control-mode connection that waiting needs, so this answered at once; call again later"
	}
	if waiting && s.live != nil && len(got.Lines) == 0 && got.Continuous {
		wctx, w := s.startWait(ctx, req, in.WaitMs, "capture_since")
		defer w.end()
		res.EffectiveTimeoutMs = w.ms()
		watch := s.watchPane(wctx, got.Pos.SessionID, in.PaneID, true)
		defer func() { watch.Stop() }()
		res.Streaming = watch.Stream
		pos := got.Pos
	wait:
		for {
			select {
			case <-watch.C:
			case <-watch.Ended:
				// The connection ended: read once more, and watch anew.
				watch.Stop()
				watch = s.watchPane(wctx, got.Pos.SessionID, in.PaneID, true)
			case <-wctx.Done():
				if s.ended(wctx, ctx) == outcomeCancelled {
					res.Note = "cancelled before new lines arrived"
				}
				break wait
			}
			next, err := cursor.ReadSince(ctx, s.tmux, in.PaneID, a, &pos, s.budget.Lines)
			if err != nil {
				return captureSinceResult{}, s.explain(ctx, err, "pane", in.PaneID)
			}
			got, pos = next, next.Pos
			if len(got.Lines) > 0 || !got.Continuous || got.Pos.Dead {
				break
			}
		}
	}
	res.trimmed = s.budget.KeepNewest(got.Lines)
	res.Cursor = got.Next.String()
	res.Continuous = got.Continuous
	res.MissedLines = got.Missed
	var notes []string
	if res.Note != "" {
		notes = append(notes, res.Note)
	}
	if !got.Continuous {
		if got.Overrun {
			notes = append(notes, fmt.Sprintf("the pane printed more than its history (history-limit) keeps since your cursor: lines were lost before this read (at least %d), so these do not follow the last ones you saw", got.Missed))
		} else {
			notes = append(notes, "the pane was cleared or redrawn since your cursor; these lines do not follow the last ones you saw")
		}
	}
	if res.DroppedLines > 0 {
		notes = append(notes, "older new lines were left out to stay within the read budget")
	}
	if got.Pos.Dead {
		notes = append(notes, "the pane is dead: no more lines will come")
	}
	if in.Cursor != "" {
		notes = append(notes, "this server did not watch the pane's output between calls (LIBTMUX_MCP_LIVE=0, or no control connection), so missedLines is a lower bound and a pane that repeats its lines can hide a gap")
	}
	res.Note = strings.Join(notes, "; ")
	return res, nil
}

// captureSinceStream answers from the pane's view: lines counted as the
// pane printed them, so what was missed is exact. ok is false when no view
// can be had (the connection could not be opened): the caller falls back
// to the grid.
func (s *server) captureSinceStream(ctx context.Context, req *mcp.CallToolRequest, in captureSinceParams) (res captureSinceResult, err error, ok bool) {
	var cur cursor.Stream
	hasCursor := false
	foreign := false
	if in.Cursor != "" {
		c, isStream, err := cursor.ParseStream(in.PaneID, in.Cursor)
		if err != nil {
			return captureSinceResult{}, err, true
		}
		if !isStream {
			if _, err := cursor.ParseAnchor(in.PaneID, in.Cursor); err != nil {
				return captureSinceResult{}, err, true
			}
			foreign = true
		}
		cur, hasCursor = c, isStream
	}
	v, release, err := s.paneView(ctx, in.PaneID, s.viewKeep(), nil, nil)
	if err != nil {
		if paneMissing(err) {
			return captureSinceResult{}, s.explain(ctx, err, "pane", in.PaneID), true
		}
		s.log.Debug("no view of the pane; capture_since reads the grid", "pane", in.PaneID, "err", err)
		return captureSinceResult{}, nil, false
	}
	defer release()
	defer v.Keep(s.viewKeep()) // the keep time counts from the answer
	res = captureSinceResult{PaneID: in.PaneID, Streaming: true}
	if hasCursor && cur.Epoch != v.Epoch() {
		foreign = true
	}
	if !hasCursor || foreign {
		// The screen's finished rows, and the count of lines at the moment
		// tmux read them: the cursor goes on from exactly there.
		q, err := tmux.NewRowsQuery(in.PaneID, 0, tmux.Position{}, false)
		if err != nil {
			return captureSinceResult{}, err, true
		}
		var at uint64
		var unfinished string
		out, err := v.CommandList(ctx, func(l *live.Lines) { at, unfinished = l.Newest(), l.Unfinished() }, tmux.SplitList(q.Args)...)
		if err != nil {
			return captureSinceResult{}, s.explain(ctx, err, "pane", in.PaneID), true
		}
		rows, _, err := q.Parse(out)
		if err != nil {
			return captureSinceResult{}, err, true
		}
		got := cursor.Finish(in.PaneID, rows, rows.HistorySize, true, 0)
		res.trimmed = s.budget.KeepNewest(got.Lines)
		if res.Lines == nil {
			res.Lines = []string{}
		}
		res.Cursor = cursor.Stream{Pane: in.PaneID, Epoch: v.Epoch(), Line: at}.String()
		res.Continuous = !foreign
		if res.DroppedLines == 0 {
			res.Unfinished = unfinished
		}
		var notes []string
		if foreign {
			notes = append(notes, fmt.Sprintf("this server was not watching the pane since your cursor (it stops %s after the last capture_since, run_shell_command or wait_for_text for the pane, or its connection ended), so lines printed meanwhile may be missing and these are the screen's; missedLines is a lower bound; from this cursor on it is exact", s.viewKeep()))
		}
		if rows.Dead {
			notes = append(notes, "the pane is dead: no more lines will come")
		}
		res.Note = strings.Join(notes, "; ")
		return res, nil, true
	}

	var (
		lines      []string
		missed     uint64
		marks      []live.Mark
		newest     uint64
		future     bool
		unfinished string
		asking     bool // the wait ended on an unfinished line that held still
	)
	read := func() {
		v.Read(func(l *live.Lines) {
			newest = l.Newest()
			unfinished = l.Unfinished()
			if cur.Line > newest {
				future = true
				return
			}
			from := cur.Line + 1
			if o := l.Oldest(); from < o {
				missed, from = o-from, o
			}
			lines = l.Get(from, newest)
			marks = l.Marks(cur.Line)
		})
	}
	// A round trip first: tmux sends the output it read before a command
	// ahead of the command's answer, so after it the view holds at least
	// what the screen shows now.
	pos, perr := v.Position(ctx)
	if perr != nil {
		gone := errors.Is(perr, tmux.ErrNotFound) || errors.Is(perr, tmux.ErrNoServer)
		if gone || ctx.Err() != nil || ctx.Value(viewRetried{}) != nil {
			return captureSinceResult{}, s.explain(ctx, perr, "pane", in.PaneID), true
		}
		// The view's connection failed under it: a pane moved out of its
		// session ends that session's client (tmux closes it when the
		// session goes away), which a command can meet before the view
		// hears of it. Start again, once, on a new view.
		v.End()
		release()
		return s.captureSinceStream(context.WithValue(ctx, viewRetried{}, true), req, in)
	}
	if pos.SessionID != v.Session() {
		// The pane moved to another session: its output no longer comes
		// here, so this view cannot say what it missed. Start again.
		v.End()
		release()
		return s.captureSinceStream(ctx, req, in)
	}
	read()
	if future {
		return captureSinceResult{}, fmt.Errorf("cursor %q is ahead of the pane's output; omit cursor to start again from the current screen", in.Cursor), true
	}
	if in.WaitMs != nil && *in.WaitMs > 0 {
		res.EffectiveTimeoutMs = s.effectiveTimeout(in.WaitMs).Milliseconds() // also when it answers at once
	}
	if in.WaitMs != nil && *in.WaitMs > 0 && len(lines) == 0 && missed == 0 && !pos.Dead {
		wctx, w := s.startWait(ctx, req, in.WaitMs, "capture_since")
		defer w.end()
		res.EffectiveTimeoutMs = w.ms()
		// A line the pane starts during the wait and then leaves as it is (a question waiting
		// for its answer) ends the wait once it has held still for questionSettles: no line
		// would end before the answer. One already there when the wait began (a shell's
		// prompt) does not, and neither does one that keeps changing (a progress bar).
		before, settled := unfinished, (<-chan time.Time)(nil)
		var settle *time.Timer
		defer func() {
			if settle != nil {
				settle.Stop()
			}
		}()
		// look reads the view again and, when the unfinished line changed, starts (or stops)
		// timing how long it holds still.
		look := func() {
			was := unfinished
			read()
			if unfinished == was {
				return
			}
			if unfinished == "" || unfinished == before {
				settled = nil
				return
			}
			if settle == nil {
				settle = time.NewTimer(questionSettles)
			} else {
				settle.Reset(questionSettles)
			}
			settled = settle.C
		}
	wait:
		for len(lines) == 0 {
			select {
			case <-v.Changed():
				look()
			case <-settled:
				asking = true
				break wait
			case <-v.Wake():
				// An event that may end the pane (or output): look.
				look()
				if len(lines) == 0 {
					if pos, perr = v.Position(ctx); perr != nil || pos.Dead {
						break wait
					}
				}
			case <-v.Ended():
				read()
				break wait
			case <-wctx.Done():
				if s.ended(wctx, ctx) == outcomeCancelled {
					res.Note = "cancelled before new lines arrived"
				}
				break wait
			}
		}
	}
	t := s.budget.KeepOldest(lines)
	res.trimmed = t
	if res.Lines == nil {
		res.Lines = []string{}
	}
	last := cur.Line + missed + uint64(len(t.Lines))
	res.Cursor = cursor.Stream{Pane: in.PaneID, Epoch: v.Epoch(), Line: last}.String()
	res.MissedLines = int(missed)
	res.Continuous = missed == 0
	var notes []string
	if res.Note != "" {
		notes = append(notes, res.Note)
	}
	if missed > 0 {
		notes = append(notes, fmt.Sprintf("%d lines printed after your cursor (lines %d-%d of the pane's output) left the lines this server keeps for the pane (as many as its history-limit and height) before this read: they are lost, and missedLines counts them exactly", missed, cur.Line+1, cur.Line+missed))
	}
	if t.DroppedLines > 0 {
		notes = append(notes, fmt.Sprintf("%d more lines (lines %d-%d) are waiting: this answer stops at the read budget with the oldest unread lines first; call capture_since again with this cursor to read them", t.DroppedLines, last+1, last+uint64(t.DroppedLines)))
	}
	if t.DroppedChars > 0 {
		notes = append(notes, fmt.Sprintf("a line longer than the character budget was cut to its first characters (%d left out)", t.DroppedChars))
	}
	var cut int
	v.Read(func(l *live.Lines) { cut = l.Cut(last-uint64(len(t.Lines))+1, last) })
	if cut > 0 {
		res.DroppedChars += cut
		notes = append(notes, fmt.Sprintf("%d characters of lines longer than %d characters were not kept (a line keeps its first %d) and are counted in droppedChars", cut, live.MaxLineRunes, live.MaxLineRunes))
	}
	if m := live.MarksNote(marks, 0); m != "" {
		notes = append(notes, m)
	}
	if t.DroppedLines == 0 {
		res.Unfinished = unfinished // it follows the last of lines only when none is left for later
		switch {
		case asking && len(t.Lines) == 0:
			notes = append(notes, fmt.Sprintf("the pane started a line during the wait and left it unfinished for %s (unfinished): a program may be waiting for input there, so this answered before its wait ended", questionSettles))
		case len(t.Lines) == 0 && unfinished != "" && res.EffectiveTimeoutMs > 0:
			notes = append(notes, "no line ended while this waited; the pane shows an unfinished one (unfinished): a shell's prompt, or a program waiting for input")
		}
	}
	if !v.Alive() {
		notes = append(notes, "the connection that watched the pane ended (its session or server went away)")
	}
	if pos.Dead {
		notes = append(notes, "the pane is dead: no more lines will come")
	}
	res.Note = strings.Join(notes, "; ")
	return res, nil, true
}

// questionSettles is how long a line a pane started during a capture_since wait must stay
// unfinished and unchanged for the wait to end on it.
const questionSettles = 500 * time.Millisecond

// viewRetried marks a capture_since that already started again on a new
// view after its view's connection failed.
type viewRetried struct{}
