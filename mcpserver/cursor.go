package mcpserver

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// anchor is what a capture_since cursor carries: the absolute grid row of
// the last finished line delivered (-1: none yet), a hash of that row with
// the two rows above it (so a blank row alone never anchors), and the
// cursor's screen row and the pane's height when it was taken.
type anchor struct {
	pane   string
	row    int
	hash   uint64
	cy     int
	height int
}

const cursorPrefix = "lc1"

// String is the opaque cursor text: lc1.PANE.ROW.HASH.CY.HEIGHT.
func (a anchor) String() string {
	return fmt.Sprintf("%s.%s.%d.%016x.%d.%d", cursorPrefix, strings.TrimPrefix(a.pane, "%"), a.row, a.hash, a.cy, a.height)
}

// anchorAt anchors on the newest finished row of rows.
func anchorAt(pane string, rows tmux.Rows) (anchor, bool) {
	last := rows.CursorRow() - 1
	h, ok := hashRows(rows.Lines, rows.First, last)
	if !ok || last < 0 {
		return anchor{pane: pane, row: -1}, false
	}
	return anchor{pane: pane, row: last, hash: h, cy: rows.CursorY, height: rows.Height}, true
}

// parseCursor reads a cursor given back for pane.
func parseCursor(pane, s string) (anchor, error) {
	f := strings.Split(s, ".")
	bad := fmt.Errorf("cursor %q is not one this server returned; omit cursor to start again from the current screen", s)
	if len(f) != 6 || f[0] != cursorPrefix {
		return anchor{}, bad
	}
	if "%"+f[1] != pane {
		return anchor{}, fmt.Errorf("cursor %q belongs to pane %%%s, not %s; pass it with that pane, or omit cursor", s, f[1], pane)
	}
	row, err := strconv.Atoi(f[2])
	if err != nil || row < -1 {
		return anchor{}, bad
	}
	h, err := strconv.ParseUint(f[3], 16, 64)
	if err != nil {
		return anchor{}, bad
	}
	cy, err := strconv.Atoi(f[4])
	if err != nil || cy < 0 {
		return anchor{}, bad
	}
	height, err := strconv.Atoi(f[5])
	if err != nil || height < 0 {
		return anchor{}, bad
	}
	return anchor{pane: pane, row: row, hash: h, cy: cy, height: height}, nil
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

// since is what a read after an anchor found.
type since struct {
	lines      []string // finished rows after the anchor, oldest first
	next       anchor   // anchor on the newest finished row
	continuous bool     // the anchor was found: lines follow it directly
	missed     int      // rows known to have left tmux's history unread (a lower bound)
	overrun    bool     // not continuous because old history was dropped
	pos        tmux.Position
	cursorLine string // the unfinished row the cursor is on
}

// sinceMargin is how many rows before the anchor a read starts, to absorb
// output that arrives between the position read and the capture.
const sinceMargin = 64

// readSince returns the finished rows after a (all finished rows of the
// screen when a has no row). Position and rows come from one tmux
// invocation; a read that missed the anchor because output moved the grid
// in between is repeated with a wider margin.
func (s *server) readSince(ctx context.Context, pane string, a anchor, guess *tmux.Position) (since, error) {
	var pos tmux.Position
	if guess != nil {
		pos = *guess
	} else {
		p, err := s.tmux.CapturePosition(ctx, pane)
		if err != nil {
			return since{}, err
		}
		pos = p
	}
	if a.row < 0 {
		rows, err := s.tmux.CaptureRows(ctx, pane, pos.HistorySize-2, pos)
		if err != nil {
			return since{}, err
		}
		// No anchor: the finished rows of the screen as it is now.
		return finish(pane, rows, rows.HistorySize, true, 0), nil // rows.HistorySize: the screen's top now
	}
	margin := sinceMargin
	for attempt := 0; ; attempt++ {
		rows, err := s.tmux.CaptureRows(ctx, pane, a.row-2-margin, pos)
		if err != nil {
			return since{}, err
		}
		if rows.First > max(a.row-2, 0) && attempt < 4 {
			// Output scrolled the grid past the anchor between the two
			// reads: read again from further back.
			pos, margin = rows.Position, margin*8+rows.First-a.row
			continue
		}
		if h, ok := hashRows(rows.Lines, rows.First, a.row); ok && h == a.hash && a.row < rows.CursorRow() {
			if cleared(a, rows.Position) {
				// The screen was erased into the history (clear without
				// E3): the rows after the anchor are the old screen, then a
				// new one. Answer the new screen, not a stitch of both.
				return finish(pane, rows, rows.HistorySize, false, 0), nil
			}
			return finish(pane, rows, a.row+1, true, 0), nil
		}
		// Not where it was: tmux may have dropped old history (in steps of
		// a tenth of the limit), shifting every row up by whole steps.
		if rows.HistorySize+rows.Height >= rows.HistoryLimit-rows.Trim() {
			if found, next, err := s.findTrimmed(ctx, pane, a, rows.Position); err != nil {
				return since{}, err
			} else if found {
				return next, nil
			}
			// The anchor itself scrolled out: at least the rows between it
			// and the trim that took it are gone.
			trim := rows.Trim()
			missed := (a.row/trim+1)*trim - a.row - 1
			last, err := s.tmux.CaptureRows(ctx, pane, rows.CursorRow()-s.budget.Lines-1, rows.Position)
			if err != nil {
				return since{}, err
			}
			out := finish(pane, last, last.First, false, missed)
			out.overrun = true
			return out, nil
		}
		// Cleared (clear-history, an erase of the scrollback) or redrawn.
		last, err := s.tmux.CaptureRows(ctx, pane, 0, rows.Position)
		if err != nil {
			return since{}, err
		}
		return finish(pane, last, last.First, false, 0), nil
	}
}

// cleared reports whether the screen was erased into the history since a
// was taken: the history grew while the cursor went up. Output only moves
// the cursor down, or scrolls with it on the bottom row. A pane made
// shorter also pushes rows into the history and moves the cursor up, so a
// changed height proves nothing.
func cleared(a anchor, now tmux.Position) bool {
	then := a.row + 1 - a.cy // the history size when a was taken
	return now.Height == a.height && now.HistorySize > then && now.CursorY < a.cy
}

// findTrimmed looks for a's rows at a.row less whole trim steps.
func (s *server) findTrimmed(ctx context.Context, pane string, a anchor, pos tmux.Position) (bool, since, error) {
	trim := pos.Trim()
	if a.row < trim {
		return false, since{}, nil
	}
	steps := a.row / trim
	rows, err := s.tmux.CaptureRows(ctx, pane, a.row-steps*trim-2-sinceMargin, pos)
	if err != nil {
		return false, since{}, err
	}
	for j := 1; j <= steps; j++ {
		// Rows that arrived since pos may have trimmed once more: the
		// capture's own position is the truth.
		r := a.row - j*trim
		if h, ok := hashRows(rows.Lines, rows.First, r); ok && h == a.hash && r < rows.CursorRow() {
			return true, finish(pane, rows, r+1, true, 0), nil
		}
	}
	return false, since{}, nil
}

// finish builds the answer from rows: the finished rows from absolute index
// from up to the cursor's row, and an anchor on the newest of them.
func finish(pane string, rows tmux.Rows, from int, continuous bool, missed int) since {
	end := rows.CursorRow() // rows before end are finished
	out := since{continuous: continuous, missed: missed, pos: rows.Position}
	if i := end - rows.First; i >= 0 && i < len(rows.Lines) {
		out.cursorLine = rows.Lines[i]
	}
	for r := max(from, rows.First); r < end && r-rows.First < len(rows.Lines); r++ {
		out.lines = append(out.lines, rows.Lines[r-rows.First])
	}
	out.next, _ = anchorAt(pane, rows)
	return out
}
