package fgproc

import (
	"errors"
	"fmt"
	"runtime"
)

// LookAt is Look for a shell that edits its command line itself (zsh's
// zle, bash's readline) on terminal tty (a path, as tmux's pane_tty
// names it). Where Look says AtPrompt, it also reads the terminal's modes:
// a line editor waiting for a command line keeps its terminal raw, with
// canonical mode (ICANON) and echo both off; anything else means the shell
// itself reads its terminal another way (the read builtin reading a line or
// a key, a script's prompt), or is about to draw its prompt (it takes the
// foreground back a moment before its editor sets the modes), and LookAt
// says ReadingInput. Modes that cannot be read are an error, never
// AtPrompt.
//
// It cannot tell the line editor at its prompt from the same editor
// serving something else: vared, zsh's select, bash's read -e, or a
// continuation prompt (PS2) of an unfinished command line. A shell that
// reads its command lines without an editor (bash --noediting, zsh without
// zle, dash) keeps a canonical terminal at its prompt: for it, LookAt says
// ReadingInput always, so callers ask Look.
func LookAt(pid int, tty string) (State, error) {
	st, err := Look(pid)
	if err != nil || st != AtPrompt {
		return st, err
	}
	m, err := readModes(tty)
	if err != nil {
		return NotForeground, fmt.Errorf("%w %q: %w", ErrModes, tty, err)
	}
	if m.canonical || m.echo {
		return ReadingInput, nil
	}
	return AtPrompt, nil
}

// ErrModes is in LookAt's error when the terminal's modes could not be
// read (and not the process facts).
var ErrModes = errors.New("cannot read the modes of terminal")

// modes are the terminal modes that tell a line editor from the kernel's
// line discipline.
type modes struct {
	canonical bool // ICANON: the kernel assembles lines, read returns one
	echo      bool // ECHO: the kernel echoes what is typed
}

// readModes reads the modes of terminal tty. A termios.go file fills it
// where the system has termios and x/sys/unix names its request.
var readModes = func(tty string) (modes, error) {
	return modes{}, errNoTermios
}

// errNoTermios is readModes' answer on a system it has no request for.
var errNoTermios = errors.New("reading a terminal's modes is not implemented on " + runtime.GOOS)
