package tmux

import "strings"

// Literal makes s safe to pass where tmux expands formats (names, titles and
// patterns given to commands that expand #{...}): every # becomes ##, which
// tmux expands back to one #. Use it only for arguments that tmux expands;
// elsewhere it would double the character.
func Literal(s string) string { return strings.ReplaceAll(s, "#", "##") }

// ExactSession is the target for the session named exactly name (tmux would
// otherwise match a prefix or a pattern).
func ExactSession(name string) string { return "=" + name }
