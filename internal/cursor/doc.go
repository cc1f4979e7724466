// Package cursor encodes the cursors capture_since hands out and reads a
// pane's grid after one. An Anchor (lc1) pins the last finished row read
// from tmux's grid by its absolute row and a hash of it with the two rows
// above; ReadSince finds it again, through history trims, clears and
// redraws, and returns the rows after it. A Stream cursor (lv1) numbers
// the lines of a pane's view (package live). Both are opaque text to the
// agent.
//
// The package reads panes and formats cursors; it does not decide what an
// answer holds or how long a wait lasts.
package cursor
