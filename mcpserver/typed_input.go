package mcpserver

import (
	"slices"

	"github.com/libtmux/libtmux-mcp/internal/shellrun"
	"github.com/libtmux/libtmux-mcp/live"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// What the input tools (send_keys, send_keys_batch, paste_text) tell
// run_shell_command's engine about the input they sent: which panes'
// shells were at their prompt, what was left unentered on a command line,
// and what was typed (so that wait_for_text does not match its echo).

// atPrompts tells, for each pane of c's cohort, whether its shell is at
// its prompt (so that input goes to the shell's command line).
func (s *server) atPrompts(c checked) map[string]bool {
	at := map[string]bool{}
	for _, pn := range c.snap.Panes {
		if slices.Contains(c.cohort, pn.ID) {
			at[pn.ID] = shellrun.AtPrompt(pn.CurrentCommand, pn.PID)
		}
	}
	return at
}

// noteUnentered records what in (in a bracketed paste, when bracketed)
// left on the command lines of panes (see shellrun.Engine.NoteInput);
// prompts says which were at their shell's prompt before it.
func (s *server) noteUnentered(panes []string, in keyInput, bracketed bool, prompts map[string]bool) {
	rec := shellrun.Input{Keys: in.Keys, Text: in.Text, Enter: in.Enter}
	if len(in.Keys) > 0 {
		rec.LastKey, _ = tmux.ParseKey(in.Keys[len(in.Keys)-1])
	}
	for _, p := range panes {
		var v *live.View
		if s.live != nil {
			v = s.live.Lookup(p)
		}
		s.shell.NoteInput(p, rec, bracketed, prompts[p], v)
	}
}

// noteTypedAll tells wait_for_text that text was typed into each pane, so
// the echo of it is not taken for the program's output.
func (s *server) noteTypedAll(panes []string, text string) {
	for _, p := range panes {
		s.shell.NoteTyped(p, text)
	}
}
