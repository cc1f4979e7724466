package tmux

import "strings"

// Literal makes s safe to pass where tmux expands formats (names, titles and
// patterns given to commands that expand #{...}): every # becomes ##, which
// tmux expands back to one #. Use it only for arguments that tmux expands;
// elsewhere it would double the character.
func Literal(s string) string { return strings.ReplaceAll(s, "#", "##") }

// Arg keeps s whole as one argument of a tmux command line. tmux's
// parser ends a command at an argument that ends in ';' (dropping the ';')
// and reads a trailing "\;" as a literal ';'; Arg adds that backslash, so
// text, keys and buffer contents ending in ';' arrive unchanged. Use it for
// every payload argument (send-keys, set-buffer) of Client.Run; it changes
// nothing else. A command sent as one line over a control connection is
// quoted instead (commandLine there), where Arg's backslash would stay.
func Arg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}
