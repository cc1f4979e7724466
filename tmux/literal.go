package tmux

import "strings"

// Literal makes s safe to pass where tmux expands formats (names, titles and
// patterns given to commands that expand #{...}): every # becomes ##, which
// tmux expands back to one #. Use it only for arguments that tmux expands;
// elsewhere it would double the character.
func Literal(s string) string { return strings.ReplaceAll(s, "#", "##") }
