package cursor

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// Anchor is what a capture_since cursor carries: the absolute grid row of
// the last finished line delivered (-1: none yet), a hash of that row with
// the two rows above it (so a blank row alone never anchors), and the
// cursor's screen row and the pane's height when it was taken.
type Anchor struct {
	Pane   string
	Row    int
	Hash   uint64
	CY     int
	Height int
}

const anchorPrefix = "lc1"

// String is the opaque cursor text: lc1.PANE.ROW.HASH.CY.HEIGHT.
func (a Anchor) String() string {
	return fmt.Sprintf("%s.%s.%d.%016x.%d.%d", anchorPrefix, strings.TrimPrefix(a.Pane, "%"), a.Row, a.Hash, a.CY, a.Height)
}

// AnchorAt anchors on the newest finished row of rows.
func AnchorAt(pane string, rows tmux.Rows) (Anchor, bool) {
	last := rows.CursorRow() - 1
	h, ok := hashRows(rows.Lines, rows.First, last)
	if !ok || last < 0 {
		return Anchor{Pane: pane, Row: -1}, false
	}
	return Anchor{Pane: pane, Row: last, Hash: h, CY: rows.CursorY, Height: rows.Height}, true
}

// ParseAnchor reads a cursor given back for pane.
func ParseAnchor(pane, s string) (Anchor, error) {
	f := strings.Split(s, ".")
	bad := fmt.Errorf("cursor %q is not one this server returned; omit cursor to start again from the current screen", s)
	if len(f) != 6 || f[0] != anchorPrefix {
		return Anchor{}, bad
	}
	if "%"+f[1] != pane {
		return Anchor{}, fmt.Errorf("cursor %q belongs to pane %%%s, not %s; pass it with that pane, or omit cursor", s, f[1], pane)
	}
	row, err := strconv.Atoi(f[2])
	if err != nil || row < -1 {
		return Anchor{}, bad
	}
	h, err := strconv.ParseUint(f[3], 16, 64)
	if err != nil {
		return Anchor{}, bad
	}
	cy, err := strconv.Atoi(f[4])
	if err != nil || cy < 0 {
		return Anchor{}, bad
	}
	height, err := strconv.Atoi(f[5])
	if err != nil || height < 0 {
		return Anchor{}, bad
	}
	return Anchor{Pane: pane, Row: row, Hash: h, CY: cy, Height: height}, nil
}

// hashRows hashes the row at absolute index row with the two above it, from
// rows captured starting at absolute index first. ok is false when the row
// is not in the capture.
func hashRows(lines []string, first, row int) (uint64, bool) {
	top := max(row-2, 0) // rows above the oldest kept row do not exist
	if top < first || row-first >= len(lines) {
		return 0, false
	}
	h := fnv.New64a()
	for r := top; r <= row; r++ {
		h.Write([]byte(lines[r-first]))
		h.Write([]byte{'\n'})
	}
	return h.Sum64(), true
}

// Since is what a read after an anchor found.
type Since struct {
	Lines      []string // finished rows after the anchor, oldest first
	Next       Anchor   // anchor on the newest finished row
	Continuous bool     // the anchor was found: lines follow it directly
	Missed     int      // rows known to have left tmux's history unread (a lower bound)
	Overrun    bool     // not continuous because old history was dropped
	Pos        tmux.Position
	CursorLine string // the unfinished row the cursor is on
}

// Margin is how many rows before the anchor a read starts, to absorb
// output that arrives between the position read and the capture.
const Margin = 64

// ReadSince returns the finished rows after a (all finished rows of the
// screen when a has no row). Position and rows come from one tmux
// invocation; a read that missed the anchor because output moved the grid
// in between is repeated with a wider margin.
func ReadSince(ctx context.Context, c *tmux.Client, pane string, a Anchor, guess *tmux.Position, lines int) (Since, error) {
	var pos tmux.Position
	if guess != nil {
		pos = *guess
	} else {
		p, err := c.CapturePosition(ctx, pane)
		if err != nil {
			return Since{}, err
		}
		pos = p
	}
	if a.Row < 0 {
		rows, err := c.CaptureRows(ctx, pane, pos.HistorySize-2, pos)
		if err != nil {
			return Since{}, err
		}
		// No anchor: the finished rows of the screen as it is now.
		return Finish(pane, rows, rows.HistorySize, true, 0), nil // rows.HistorySize: the screen's top now
	}
	margin := Margin
	for attempt := 0; ; attempt++ {
		rows, err := c.CaptureRows(ctx, pane, a.Row-2-margin, pos)
		if err != nil {
			return Since{}, err
		}
		if rows.First > max(a.Row-2, 0) && attempt < 4 {
			// Output scrolled the grid past the anchor between the two
			// reads: read again from further back.
			pos, margin = rows.Position, margin*8+rows.First-a.Row
			continue
		}
		if h, ok := hashRows(rows.Lines, rows.First, a.Row); ok && h == a.Hash && a.Row < rows.CursorRow() {
			if cleared(a, rows.Position) {
				// The screen was erased into the history (clear without
				// E3): the rows after the anchor are the old screen, then a
				// new one. Answer the new screen, not a stitch of both.
				return Finish(pane, rows, rows.HistorySize, false, 0), nil
			}
			return Finish(pane, rows, a.Row+1, true, 0), nil
		}
		// Not where it was: tmux may have dropped old history (in steps of
		// a tenth of the limit), shifting every row up by whole steps.
		if rows.HistorySize+rows.Height >= rows.HistoryLimit-rows.Trim() {
			if found, next, err := findTrimmed(ctx, c, pane, a, rows.Position); err != nil {
				return Since{}, err
			} else if found {
				return next, nil
			}
			// The anchor itself scrolled out: at least the rows between it
			// and the trim that took it are gone.
			trim := rows.Trim()
			missed := (a.Row/trim+1)*trim - a.Row - 1
			last, err := c.CaptureRows(ctx, pane, rows.CursorRow()-lines-1, rows.Position)
			if err != nil {
				return Since{}, err
			}
			out := Finish(pane, last, last.First, false, missed)
			out.Overrun = true
			return out, nil
		}
		// Cleared (clear-history, an erase of the scrollback) or redrawn.
		last, err := c.CaptureRows(ctx, pane, 0, rows.Position)
		if err != nil {
			return Since{}, err
		}
		return Finish(pane, last, last.First, false, 0), nil
	}
}

// cleared reports whether the screen was erased into the history since a
// was taken: the history grew while the cursor went up. Output only moves
// the cursor down, or scrolls with it on the bottom row. A pane made
// shorter also pushes rows into the history and moves the cursor up, so a
// changed height proves nothing.
func cleared(a Anchor, now tmux.Position) bool {
	then := a.Row + 1 - a.CY // the history size when a was taken
	return now.Height == a.Height && now.HistorySize > then && now.CursorY < a.CY
}

// findTrimmed looks for a's rows at a.Row less whole trim steps.
func findTrimmed(ctx context.Context, c *tmux.Client, pane string, a Anchor, pos tmux.Position) (bool, Since, error) {
	trim := pos.Trim()
	if a.Row < trim {
		return false, Since{}, nil
	}
	steps := a.Row / trim
	rows, err := c.CaptureRows(ctx, pane, a.Row-steps*trim-2-Margin, pos)
	if err != nil {
		return false, Since{}, err
	}
	for j := 1; j <= steps; j++ {
		// Rows that arrived since pos may have trimmed once more: the
		// capture's own position is the truth.
		r := a.Row - j*trim
		if h, ok := hashRows(rows.Lines, rows.First, r); ok && h == a.Hash && r < rows.CursorRow() {
			return true, Finish(pane, rows, r+1, true, 0), nil
		}
	}
	return false, Since{}, nil
}

// Finish builds the answer from rows: the finished rows from absolute index
// from up to the cursor's row, and an anchor on the newest of them.
func Finish(pane string, rows tmux.Rows, from int, continuous bool, missed int) Since {
	end := rows.CursorRow() // rows before end are finished
	out := Since{Continuous: continuous, Missed: missed, Pos: rows.Position}
	if i := end - rows.First; i >= 0 && i < len(rows.Lines) {
		out.CursorLine = rows.Lines[i]
	}
	for r := max(from, rows.First); r < end && r-rows.First < len(rows.Lines); r++ {
		out.Lines = append(out.Lines, rows.Lines[r-rows.First])
	}
	out.Next, _ = AnchorAt(pane, rows)
	return out
}
