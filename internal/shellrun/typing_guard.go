package shellrun

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// typingGuard is what a passed protection check of a pane for a command
// saw (a typing guard), kept so that the pane's next command can be typed without a check
// of its own: tmux re-reads every fact the check decided on in the same
// control-mode line that types the command (if-shell -F), and types it
// only when all of them are unchanged (see condition). The facts that
// are this process's own (the caller's pane, a pending tmux_run
// invitation, the shell's foreground) are checked again before each use.
type typingGuard struct {
	serverPID  int
	generation string
	shellPID   int
	tty        string // pane_tty: the shell's terminal, whose modes the prompt check reads
	command    string // pane_current_command: the shell
	session    string
	// clients is the window's window_active_clients_list: the clients
	// showing it, every one a control client ("" when none); nil when
	// LIBTMUX_MCP_ATTENDED=ignore makes them irrelevant.
	clients []string
}

// guardValue is what a guard's facts may hold: formats read them back
// verbatim, with no character tmux's format parser would take for syntax.
var guardValue = regexp.MustCompile(`^[A-Za-z0-9_./+@$%:-]*$`)

// typingGuardFrom keeps what c (a passed check for a command on its pane,
// without force) decided on, if tmux can check all of it again: the pane
// alone in its cohort, and, unless attended is "ignore", no person's
// client showing its window. ok is false otherwise; each of that pane's
// commands is then checked on its own.
func typingGuardFrom(c Checked, attended string) (g typingGuard, ok bool) {
	pn := c.Pane
	if pn.Synchronized || pn.Dead || pn.InMode {
		return g, false
	}
	g = typingGuard{serverPID: c.Snapshot.Server.PID, generation: c.Snapshot.Server.Generation, shellPID: pn.PID, tty: pn.TTY, command: pn.CurrentCommand, session: pn.SessionID}
	if attended != "ignore" {
		g.clients = []string{}
		for _, cl := range c.Snapshot.Clients {
			if cl.WindowID != pn.WindowID {
				continue
			}
			if !cl.ControlMode {
				return g, false
			}
			g.clients = append(g.clients, cl.Name)
		}
	}
	for _, v := range append([]string{g.command, g.session}, g.clients...) {
		if v == "" || !guardValue.MatchString(v) {
			return g, false
		}
	}
	return g, true
}

// condition is the format that tmux expands, on the pane, to 1 when
// every fact of g still holds, else 0.
func (g typingGuard) condition() string {
	now := "#{pid}/#{pane_pid}/#{pane_current_command}/#{session_id}/#{pane_dead}#{pane_in_mode}#{pane_synchronized}"
	then := strconv.Itoa(g.serverPID) + "/" + strconv.Itoa(g.shellPID) + "/" + g.command + "/" + g.session + "/000"
	if g.clients != nil {
		now += "/#{window_active_clients_list}"
		then += "/" + strings.Join(g.clients, "#,") // #, is a comma in a format
	}
	return "#{==:" + now + "," + then + "}"
}

// typingGuards keeps each pane's typingGuard from its last passed check.
type typingGuards struct {
	mu     sync.Mutex
	byPane map[string]typingGuard
}

// maxGuards bounds the panes typingGuards and unentered remember; past it they start over.
const maxGuards = 1024

func (gs *typingGuards) get(pane string) (typingGuard, bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g, ok := gs.byPane[pane]
	return g, ok
}

// keep remembers g for pane, or, when ok is false, forgets pane's guard.
func (gs *typingGuards) keep(pane string, g typingGuard, ok bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if !ok {
		delete(gs.byPane, pane)
		return
	}
	if gs.byPane == nil || len(gs.byPane) >= maxGuards {
		gs.byPane = map[string]typingGuard{}
	}
	gs.byPane[pane] = g
}
