// Package fgproc tells whether a terminal's shell is at its prompt, from
// process facts: the shell owns its terminal's foreground process group,
// and no child of the shell runs in that group. (A shell without job
// control, such as bash -c 'cat; …', keeps the foreground while it waits
// for a child in its own group.) For a shell with a line editor (LookAt),
// the terminal's modes too: the editor keeps it raw while it waits for a
// command line, and the read builtin does not.
//
// The facts (pid, parent, process group, the terminal's foreground group)
// come from /proc on Linux and from ps(1) everywhere else (macOS, the BSDs);
// Linux asks ps too when /proc cannot answer. When neither can, the answer
// is an error, never a guess.
//
// It does not know which programs are shells (the caller checks the name,
// as tmux reports it), what is typed at the prompt, what the line editor
// is editing (a command line, a continuation line, vared), or what
// background jobs of a job-control shell do; and an answer is a snapshot:
// the shell may start a command the moment after.
package fgproc

import (
	"fmt"
	"sync/atomic"
)

// proc is what the check needs to know about one process.
type proc struct {
	PID, PPID int
	PGID      int // its process group
	TPGID     int // the foreground process group of its controlling terminal; <= 0 when it has none
}

// readFamily reads process pid and its children. ps answers unless a
// _linux.go file puts /proc first.
var readFamily = psFamily

// forcePS makes ShellAtPrompt ask ps even where /proc could answer.
var forcePS atomic.Bool

// ShellAtPrompt reports whether process pid owns its terminal's foreground
// process group while no child of it runs in that group: a shell in that
// state is showing its prompt (or about to), or reads input itself (the
// read builtin, which only LookAt tells). An error means the facts could
// not be read (the process is gone, or neither /proc nor ps answered) and
// says which and why; it never stands for yes.
func ShellAtPrompt(pid int) (bool, error) {
	s, err := Look(pid)
	return s == AtPrompt, err
}

// State is what the facts say of a shell.
type State int

// The states Look tells apart.
const (
	// AtPrompt: the shell owns its terminal's foreground and no child of
	// it runs there.
	AtPrompt State = iota
	// ChildInForeground: a child of the shell runs in the foreground (a
	// command, or a subshell, which tmux names like the shell).
	ChildInForeground
	// NotForeground: no child of the shell leads the terminal's
	// foreground, and neither does the shell: one still starting, or a
	// terminal another process took.
	NotForeground
	// ReadingInput: the shell owns its terminal's foreground with no
	// child there, but the terminal's modes are not its line editor's: the
	// shell reads input itself (the read builtin), or has just taken the
	// terminal back and not drawn its prompt yet. Only LookAt says it.
	ReadingInput
)

func (s State) String() string {
	switch s {
	case AtPrompt:
		return "AtPrompt"
	case ChildInForeground:
		return "ChildInForeground"
	case NotForeground:
		return "NotForeground"
	case ReadingInput:
		return "ReadingInput"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Look reads the facts of process pid and its children and says which
// state the shell is in; an error as ShellAtPrompt's.
func Look(pid int) (State, error) {
	read := readFamily
	if forcePS.Load() {
		read = psFamily
	}
	shell, kids, err := read(pid)
	if err != nil {
		return NotForeground, err
	}
	return state(shell, kids), nil
}

// ForcePS makes ShellAtPrompt read ps, as it does where there is no /proc,
// until restore is called. Tests on Linux use it to run the path that other
// systems take.
func ForcePS() (restore func()) {
	old := forcePS.Swap(true)
	return func() { forcePS.Store(old) }
}

// state decides from the facts: a child of the shell (one of kids) runs
// in the terminal's foreground group, or else the shell owns the
// foreground (its terminal's foreground group is the one it leads).
func state(shell proc, kids []proc) State {
	for _, k := range kids {
		if k.PPID == shell.PID && k.PGID == shell.TPGID && shell.TPGID > 0 {
			return ChildInForeground
		}
	}
	if shell.TPGID != shell.PID {
		return NotForeground
	}
	return AtPrompt
}
