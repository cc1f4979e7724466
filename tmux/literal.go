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

// Arg keeps a caller's text whole as one argument of a tmux command line:
// tmux reads a ';' that ends an argument as the end of the command (so
// "name;" would lose its ';' and start a new command with the next
// argument), and "\;" at the end as a literal ';'. Every argument that
// carries a caller's text goes through Arg, after Literal where that
// applies. It changes nothing else.
func Arg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}
