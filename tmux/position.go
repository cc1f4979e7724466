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

const positionMark = "\x1ePOS\x1f"

var positionFormat = positionMark + "#{history_size}\x1f#{history_limit}\x1f#{cursor_y}\x1f#{pane_height}\x1f#{alternate_on}\x1f#{pane_dead}\x1f#{session_id}\x1e"

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

const joinedMark = "\x1eJOINED\x1e"

func (c *Client) captureRows(ctx context.Context, pane string, from int, guess Position, joined bool) (Rows, []string, error) {
	args, err := RowsCommand(pane, from, guess, joined)
	if err != nil {
		return Rows{}, nil, err
	}
	out, err := c.Run(ctx, args...)
	if err != nil {
		return Rows{}, nil, err
	}
	return ParseRows(out, from, guess, joined)
}

// RowsCommand is the tmux command line of CaptureRows (CaptureRowsJoined
// when joined), for callers that send it over a control connection; parse
// its output with ParseRows.
func RowsCommand(pane string, from int, guess Position, joined bool) ([]string, error) {
	if !ValidPaneID(pane) {
		return nil, fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	rel := strconv.Itoa(from - guess.HistorySize)
	args := []string{"display-message", "-p", "-t", pane, positionFormat, ";",
		"capture-pane", "-p", "-t", pane, "-S", rel, "-E", "-"}
	if joined {
		args = append(args, ";", "display-message", "-p", "-t", pane, joinedMark, ";",
			"capture-pane", "-p", "-J", "-t", pane, "-S", rel, "-E", "-")
	}
	return args, nil
}

// ParseRows parses the output of RowsCommand with the same arguments.
func ParseRows(out string, from int, guess Position, joined bool) (Rows, []string, error) {
	pos, rest, err := parsePosition(out)
	if err != nil {
		return Rows{}, nil, err
	}
	var joinedLines []string
	if joined {
		var j string
		var ok bool
		rest, j, ok = strings.Cut(rest, joinedMark+"\n")
		if !ok {
			return Rows{}, nil, fmt.Errorf("tmux printed no joined capture")
		}
		joinedLines = strings.Split(strings.TrimSuffix(j, "\n"), "\n")
	}
	// tmux clamps -S to the oldest kept row.
	first := max(pos.HistorySize+(from-guess.HistorySize), 0)
	return Rows{Position: pos, First: first, Lines: strings.Split(strings.TrimSuffix(rest, "\n"), "\n")}, joinedLines, nil
}

// CapturePosition reads only the pane's position.
func (c *Client) CapturePosition(ctx context.Context, pane string) (Position, error) {
	if !ValidPaneID(pane) {
		return Position{}, fmt.Errorf("pane id %q is not of the form %%N", pane)
	}
	out, err := c.Run(ctx, "display-message", "-p", "-t", pane, positionFormat)
	if err != nil {
		return Position{}, err
	}
	pos, _, err := parsePosition(out)
	return pos, err
}

func parsePosition(out string) (Position, string, error) {
	body, ok := strings.CutPrefix(out, positionMark)
	if !ok {
		return Position{}, "", fmt.Errorf("tmux printed %q where the pane position was expected", firstLine(out))
	}
	head, rest, ok := strings.Cut(body, "\x1e\n")
	if !ok {
		return Position{}, "", fmt.Errorf("tmux printed an unterminated pane position %q", firstLine(out))
	}
	f := strings.Split(head, "\x1f")
	if len(f) != 7 {
		return Position{}, "", fmt.Errorf("tmux pane position %q has %d fields; want 7", head, len(f))
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
