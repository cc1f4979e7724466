package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchLimits bound one search_panes call.
type searchLimits struct {
	panes   int
	lines   int
	bytes   int
	elapsed time.Duration
}

// searchLimitsNow returns the limits of a search: the published ones,
// except in tests that replace it to reach each limit cheaply.
var searchLimitsNow = func() searchLimits {
	return searchLimits{panes: 200, lines: 20_000, bytes: 256 << 10, elapsed: 5 * time.Second}
}

const (
	maxPatternLen   = 1024
	maxMatchLineLen = 400 // code points of a matching line returned
)

type searchPanesParams struct {
	Pattern       string `json:"pattern" jsonschema:"text, or RE2 regexp if regex"`
	Regex         bool   `json:"regex,omitempty"`
	CaseSensitive bool   `json:"caseSensitive,omitempty"`
	SessionID     string `json:"sessionId,omitempty"`
	WindowID      string `json:"windowId,omitempty"`
	PaneID        string `json:"paneId,omitempty"`
}

type searchMatch struct {
	PaneID string `json:"paneId"`
	Line   int    `json:"line" jsonschema:"as capture_pane numbers lines"`
	Text   string `json:"text"`
}

type searchPanesResult struct {
	Matches        []searchMatch `json:"matches"`
	DroppedMatches int           `json:"droppedMatches"`
	PanesSearched  int           `json:"panesSearched"`
	LinesSearched  int           `json:"linesSearched"`
	StoppedBy      string        `json:"stoppedBy" jsonschema:"the limit that ended it, if any"`
	Note           string        `json:"note,omitempty"`
}

func searchPanesTool() tool {
	return &typedTool[searchPanesParams, searchPanesResult]{toolSpec: toolSpec{
		name:    "search_panes",
		toolset: Inspect,
		title:   "Search panes",
		description: "Which panes show a text (screen or scrollback), with line numbers. Bounded (stoppedBy names the limit hit): narrow by session, window or pane. " +
			`Example: {"pattern":"error","windowId":"@1"}`,
		capability: Capability{
			ProcessReach: ReachNone,
			Effects:      []Effect{EffectObserve},
			Outputs:      []Output{OutputTerminalContent},
			InputLiteralization: map[string]Literalization{
				"pattern":   litNotSent,
				"sessionId": litValidated, "windowId": litValidated, "paneId": litValidated,
			},
		},
	}, handle: (*server).searchPanes}
}

func (s *server) searchPanes(ctx context.Context, _ *mcp.CallToolRequest, in searchPanesParams) (searchPanesResult, error) {
	lim := searchLimitsNow()
	re, err := compileSearch(in)
	if err != nil {
		return searchPanesResult{}, err
	}
	scope, kind, id, err := searchScope(in)
	if err != nil {
		return searchPanesResult{}, err
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Panes: true, Scope: scope})
	if err != nil {
		if kind == "" {
			return searchPanesResult{}, s.fail(err)
		}
		return searchPanesResult{}, s.explain(ctx, err, kind, id)
	}
	panes := snap.Panes
	if in.PaneID != "" { // list-panes -t %N lists the whole window
		panes = nil
		for _, p := range snap.Panes {
			if p.ID == in.PaneID {
				panes = append(panes, p)
			}
		}
		if len(panes) == 0 {
			return searchPanesResult{}, fmt.Errorf("no pane %s on this server; call list_panes for the panes that exist", in.PaneID)
		}
	}
	res := searchPanesResult{Matches: []searchMatch{}}
	if len(panes) > lim.panes {
		panes, res.StoppedBy = panes[:lim.panes], "panes"
	}
	// Plan the captures from each pane's size so the whole search reads at
	// most lim.lines lines, each pane's newest first. stoppedBy names the
	// limit that ended the reading earliest: lines before panes, and bytes
	// or time (while matching) before both.
	type plan struct {
		id    string
		start int // first line read (negative: into the scrollback)
	}
	var plans []plan
	var cmds [][]string
	left := lim.lines
	for _, p := range panes {
		if left <= 0 {
			res.StoppedBy = "lines"
			break
		}
		n := p.Height + p.HistorySize
		if n > left {
			n = left
			res.StoppedBy = "lines"
		}
		left -= n
		start := p.Height - n // 0 when only the screen is read
		plans = append(plans, plan{p.ID, start})
		cmds = append(cmds, []string{"capture-pane", "-p", "-t", p.ID, "-S", strconv.Itoa(start), "-E", strconv.Itoa(p.Height - 1)})
	}
	if len(cmds) == 0 {
		if res.StoppedBy == "" {
			res.Note = "no panes in this scope"
		}
		return res, nil
	}
	outs, err := s.tmux.Outputs(ctx, cmds...)
	if err != nil {
		if errors.Is(err, tmux.ErrNotFound) {
			return searchPanesResult{}, fmt.Errorf("a pane closed while the search read it (%v); call search_panes again", err)
		}
		return searchPanesResult{}, s.fail(err)
	}
	began := time.Now()
	matched := 0
	maxMatches := s.budget.Lines
scan:
	for i, pl := range plans {
		lines := tmux.SplitCapture(outs[i]) // without the blank rows below the text
		res.PanesSearched++
		for j, line := range lines {
			if matched+len(line) > lim.bytes {
				res.StoppedBy = "bytes"
				break scan
			}
			if j%64 == 0 {
				if err := ctx.Err(); err != nil {
					return searchPanesResult{}, err
				}
				if time.Since(began) > lim.elapsed {
					res.StoppedBy = "time"
					break scan
				}
			}
			matched += len(line) + 1
			res.LinesSearched++
			loc := re.FindStringIndex(line)
			if loc == nil {
				continue
			}
			if len(res.Matches) >= maxMatches {
				res.DroppedMatches++
				continue
			}
			res.Matches = append(res.Matches, searchMatch{PaneID: pl.id, Line: pl.start + j, Text: aroundMatch(line, loc[0])})
		}
	}
	switch {
	case res.StoppedBy != "":
		res.Note = "the " + res.StoppedBy + " limit stopped the search before it read every pane in scope; narrow it with sessionId, windowId or paneId"
	case res.DroppedMatches > 0:
		res.Note = fmt.Sprintf("only the first %d matches are listed; use a narrower pattern or scope", maxMatches)
	}
	if res.DroppedMatches > 0 && res.StoppedBy != "" {
		res.Note += fmt.Sprintf("; only the first %d matches are listed", maxMatches)
	}
	return res, nil
}

// compileSearch turns the pattern into a Go regexp (RE2: linear time, no
// catastrophic backtracking).
func compileSearch(in searchPanesParams) (*regexp.Regexp, error) {
	if in.Pattern == "" {
		return nil, errors.New("pattern is empty; give the text to look for")
	}
	if len(in.Pattern) > maxPatternLen {
		return nil, fmt.Errorf("pattern is %d bytes; at most %d are allowed", len(in.Pattern), maxPatternLen)
	}
	expr := in.Pattern
	if !in.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if !in.CaseSensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid Go (RE2) regular expression: %v; fix it, or pass regex:false to search for the text literally", err)
	}
	return re, nil
}

// searchScope validates the one optional scope argument.
func searchScope(in searchPanesParams) (tmux.PaneScope, string, string, error) {
	var scope tmux.PaneScope
	kind, id, n := "", "", 0
	for _, c := range []struct{ kind, id string }{{"session", in.SessionID}, {"window", in.WindowID}, {"pane", in.PaneID}} {
		if c.id == "" {
			continue
		}
		n++
		kind, id = c.kind, c.id
		if err := checkID(c.kind, c.id); err != nil {
			return scope, "", "", err
		}
	}
	if n > 1 {
		return scope, "", "", errors.New("give at most one of sessionId, windowId and paneId")
	}
	switch kind {
	case "session":
		scope.SessionID = id
	case "window":
		scope.WindowID = id
	case "pane":
		scope.PaneID = id
	}
	return scope, kind, id, nil
}

// aroundMatch bounds a matching line to maxMatchLineLen code points,
// keeping the match near the start of what is returned.
func aroundMatch(line string, at int) string {
	if utf8.RuneCountInString(line) <= maxMatchLineLen {
		return line
	}
	from := at
	for k := 0; k < 40 && from > 0; k++ { // some context before the match
		_, size := utf8.DecodeLastRuneInString(line[:from])
		from -= size
	}
	rest := line[from:]
	end := len(rest)
	for k, i := 0, 0; i < len(rest); k++ {
		if k == maxMatchLineLen {
			end = i
			break
		}
		_, size := utf8.DecodeRuneInString(rest[i:])
		i += size
	}
	return rest[:end]
}
