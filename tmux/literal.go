package tmux

import "strings"

// Literal makes s safe to pass where tmux expands formats (names, titles and
// directories given to commands that expand #{...}): a # becomes ##, which
// tmux expands back to one #. A run of #s right before [ stays as it is:
// tmux 3.3a keeps such a run verbatim (it is a style, #[fg=red], left for
// drawing), so doubling it would store extra #s. Use Literal only for
// arguments that tmux expands; elsewhere it would double the character.
func Literal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '#' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '#' {
			j++
		}
		b.WriteString(s[i:j])
		if j == len(s) || s[j] != '[' {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}

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
