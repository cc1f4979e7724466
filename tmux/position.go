package tmux

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Position is where a pane's grid stands: rows of history above the
// screen, the cursor's row on the screen, and the history limit. A grid
// row's absolute index counts from the oldest row tmux still keeps: the
// screen's row r is HistorySize+r. Absolute indices of kept rows change
// only when tmux drops old history (in steps of HistoryLimit/10) or clears
// it.
type Position struct {
	HistorySize  int
	HistoryLimit int
	CursorY      int
	Height       int
	Alternate    bool // the alternate screen is on (no history is kept for it)
	Dead         bool
	SessionID    string // the pane's session ($N)
}

// CursorRow is the absolute index of the cursor's row.
func (p Position) CursorRow() int { return p.HistorySize + p.CursorY }

// Trim is how many rows tmux drops at once when the history is full.
func (p Position) Trim() int { return max(p.HistoryLimit/10, 1) }

// positionVars are the format variables of a Position, in order.
var positionVars = []string{"history_size", "history_limit", "cursor_y", "pane_height", "alternate_on", "pane_dead", "session_id"}

// positionFormat is the display-message format of a Position: one record
// tagged POS, so the parser can tell it from anything else printed first.
func positionFormat(seps Separators) string {
	return "POS" + seps.Field + seps.Format(positionVars...)
}

// joinedMark is the line printed before a joined capture.
func joinedMark(seps Separators) string { return "JOINED" + seps.Record }

// Rows is a capture of a pane with the position read in the same tmux
// invocation (tmux processes no pane output between the commands of one
// invocation, so the rows and the position describe one moment).
type Rows struct {
	Position
	First int      // absolute index of Lines[0]
	Lines []string // one per grid row (not joined), trailing spaces trimmed
}

// CaptureRows reads pane's position and its rows from absolute index from
// (clamped to the oldest kept row) to the bottom of the screen, in one
// invocation. The relative start is computed from guess, an earlier
// position: when output arrived in between, First says where the capture
// really starts.
func (c *Client) CaptureRows(ctx context.Context, pane string, from int, guess Position) (Rows, error) {
	rows, _, err := c.captureRows(ctx, pane, from, guess, false)
	return rows, err
}

// CaptureRowsJoined is CaptureRows that also returns the same rows with
// wrapped rows joined into lines (capture-pane -J), from the same
// invocation.
func (c *Client) CaptureRowsJoined(ctx context.Context, pane string, from int, guess Position) (Rows, []string, error) {
	return c.captureRows(ctx, pane, from, guess, true)
}

func (c *Client) captureRows(ctx context.Context, pane string, from int, guess Position, joined bool) (Rows, []string, error) {
	q, err := NewRowsQuery(pane, from, guess, joined)
	if err != nil {
		return Rows{}, nil, err
	}
	out, err := c.Run(ctx, q.Args...)
	if err != nil {
		return Rows{}, nil, err
	}
	return q.Parse(out)
}

// RowsQuery is the tmux command line of CaptureRows (CaptureRowsJoined
// when joined), for callers that send it over a control connection, and
// the parser of its output.
type RowsQuery struct {
	Args   []string
	from   int
	guess  Position
	joined bool
	seps   Separators
}

// NewRowsQuery builds the query of CaptureRows (CaptureRowsJoined when
// joined).
func NewRowsQuery(pane string, from int, guess Position, joined bool) (RowsQuery, error) {
	if !ValidPaneID(pane) {
		return RowsQuery{}, fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	q := RowsQuery{from: from, guess: guess, joined: joined, seps: NewSeparators()}
	rel := strconv.Itoa(from - guess.HistorySize)
	q.Args = []string{"display-message", "-p", "-t", pane, positionFormat(q.seps), ";",
		"capture-pane", "-p", "-t", pane, "-S", rel, "-E", "-"}
	if joined {
		q.Args = append(q.Args, ";", "display-message", "-p", "-t", pane, joinedMark(q.seps), ";",
			"capture-pane", "-p", "-J", "-t", pane, "-S", rel, "-E", "-")
	}
	return q, nil
}

// Parse parses the output of the query's command line.
func (q RowsQuery) Parse(out string) (Rows, []string, error) {
	pos, rest, err := parsePosition(out, q.seps)
	if err != nil {
		return Rows{}, nil, err
	}
	var joinedLines []string
	if q.joined {
		var j string
		var ok bool
		rest, j, ok = strings.Cut(rest, joinedMark(q.seps)+"\n")
		if !ok {
			return Rows{}, nil, fmt.Errorf("tmux printed no joined capture")
		}
		joinedLines = strings.Split(strings.TrimSuffix(ExpandTabs(j), "\n"), "\n")
		trimJoined(joinedLines)
	}
	// tmux clamps -S to the oldest kept row.
	first := max(pos.HistorySize+(q.from-q.guess.HistorySize), 0)
	return Rows{Position: pos, First: first, Lines: strings.Split(strings.TrimSuffix(ExpandTabs(rest), "\n"), "\n")}, joinedLines, nil
}

// CapturePosition reads only the pane's position.
func (c *Client) CapturePosition(ctx context.Context, pane string) (Position, error) {
	if !ValidPaneID(pane) {
		return Position{}, fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	seps := NewSeparators()
	out, err := c.Run(ctx, "display-message", "-p", "-t", pane, positionFormat(seps))
	if err != nil {
		return Position{}, err
	}
	pos, _, err := parsePosition(out, seps)
	return pos, err
}

// PositionArgs is CapturePosition's command, for a control connection;
// ParsePosition reads its output.
func PositionArgs(pane string, seps Separators) []string {
	return []string{"display-message", "-p", "-t", pane, positionFormat(seps)}
}

// ParsePosition reads the output of PositionArgs.
func ParsePosition(out string, seps Separators) (Position, error) {
	pos, _, err := parsePosition(out, seps)
	return pos, err
}

// SplitList cuts args at the ";" arguments that separate the commands of
// a list (as RowsQuery.Args has them), for Control.CommandList.
func SplitList(args []string) [][]string {
	var out [][]string
	start := 0
	for i, a := range args {
		if a == ";" {
			out = append(out, args[start:i])
			start = i + 1
		}
	}
	return append(out, args[start:])
}

// parsePosition reads the position record at the start of out and returns
// what follows it.
func parsePosition(out string, seps Separators) (Position, string, error) {
	body, ok := strings.CutPrefix(out, "POS"+seps.Field)
	if !ok {
		return Position{}, "", fmt.Errorf("tmux printed %q where the pane position was expected", clip(firstLine(out)))
	}
	head, rest, ok := strings.Cut(body, seps.Record+"\n")
	if !ok {
		return Position{}, "", fmt.Errorf("tmux printed an unterminated pane position %q", clip(firstLine(out)))
	}
	f := strings.Split(head, seps.Field)
	if len(f) != len(positionVars) {
		return Position{}, "", fmt.Errorf("tmux pane position %q has %d fields; want %d", clip(head), len(f), len(positionVars))
	}
	var n [4]int
	for i := range n {
		v, err := strconv.Atoi(f[i])
		if err != nil {
			// A missing pane expands every field to "" in display-message.
			if f[i] == "" {
				return Position{}, "", &Error{Args: []string{"display-message"}, Stderr: "can't find pane", Err: errors.New("empty position")}
			}
			return Position{}, "", fmt.Errorf("tmux pane position field %d is %q, not a number", i, f[i])
		}
		n[i] = v
	}
	return Position{HistorySize: n[0], HistoryLimit: n[1], CursorY: n[2], Height: n[3], Alternate: f[4] == "1", Dead: f[5] == "1", SessionID: f[6]}, rest, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Executable is the absolute path of the tmux program this client runs,
// for commands that a pane's shell runs back against this server.
func (c *Client) Executable() (string, error) {
	p, err := exec.LookPath(c.route.bin())
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}
