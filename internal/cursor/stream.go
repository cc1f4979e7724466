package cursor

import (
	"fmt"
	"strconv"
	"strings"
)

// Stream is a cursor on a pane's view (see live.View): the pane, the
// view's epoch and the number of the last line delivered.
type Stream struct {
	Pane  string
	Epoch string
	Line  uint64
}

const streamPrefix = "lv1"

// String is the opaque cursor text: lv1.PANE.EPOCH.LINE.
func (c Stream) String() string {
	return fmt.Sprintf("%s.%s.%s.%d", streamPrefix, strings.TrimPrefix(c.Pane, "%"), c.Epoch, c.Line)
}

// ParseStream reads an lv1 cursor given back for pane; ok is false for
// another kind.
func ParseStream(pane, s string) (c Stream, ok bool, err error) {
	if !strings.HasPrefix(s, streamPrefix+".") {
		return Stream{}, false, nil
	}
	f := strings.Split(s, ".")
	bad := fmt.Errorf("cursor %q is not one this server returned; omit cursor to start again from the current screen", s)
	if len(f) != 4 {
		return Stream{}, true, bad
	}
	if "%"+f[1] != pane {
		return Stream{}, true, fmt.Errorf("cursor %q belongs to pane %%%s, not %s; pass it with that pane, or omit cursor", s, f[1], pane)
	}
	n, err := strconv.ParseUint(f[3], 10, 64)
	if err != nil || f[2] == "" {
		return Stream{}, true, bad
	}
	return Stream{Pane: pane, Epoch: f[2], Line: n}, true, nil
}
