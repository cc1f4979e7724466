package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// purpose is what a tool is about to do to a pane; it decides which
// protections apply.
type purpose int

const (
	// forInput sends keys: the whole synchronize-panes cohort receives
	// them, so every member is checked.
	forInput purpose = iota
	// forPaste pastes a buffer: tmux pastes to the target only.
	forPaste
	// forCommand types a framed command: the cohort must be the pane alone.
	forCommand
	// forTeardown kills or clears: every pane inside the target is checked,
	// dead and modal panes included (killing them is fine).
	forTeardown
)

// codeInvitationPending begins the refusal of input to a pane with a pending tmux_run
// invitation.
const codeInvitationPending = "invitation_pending"

// inputTo notes that input is about to go to panes, for this process's enrollments
// (Enrollments.InputBegins) and in the pane records every libtmux-mcp process reads
// (panerecord's InputBegins); call the function it returns once it went or failed.
func (s *server) inputTo(panes ...string) (end func()) {
	recorded, err := s.paneRecords().InputBegins(panes...)
	if err != nil {
		s.log.Warn("input to panes is not recorded for other libtmux-mcp processes", "panes", panes, "err", err)
	}
	own := func() {}
	if s.deps.Enrollments != nil {
		own = s.deps.Enrollments.InputBegins(panes...)
	}
	return func() { own(); recorded() }
}

// typingWindow is how recent a person's keystroke must be for the
// "typing" attended mode to refuse.
const typingWindow = 5 * time.Second

// checked is what a passed protection check saw, from one tmux call.
type checked struct {
	pane   tmux.Pane   // the target pane (the first pane for a window or session)
	panes  []tmux.Pane // every pane inside the target
	cohort []string    // pane ids that input to pane reaches, sorted
	snap   tmux.Snapshot
}

// protect reads the target (a pane, window or session id) with its panes
// and clients in one tmux call and refuses when the caller's own pane, a
// pane a person is attending, a dead or modal pane (for input), or a
// synchronized cohort (for commands) is involved. force confirms only the
// caller's own pane, and only when it equals that pane's exact id; it never
// overrides another check.
func (s *server) protect(ctx context.Context, kind, id, force string, p purpose) (checked, error) {
	return s.protectVia(ctx, nil, kind, id, force, p)
}

// protectVia is protect reading through run (a control connection's
// command list) instead of a tmux process, when run is not nil.
func (s *server) protectVia(ctx context.Context, run func(ctx context.Context, args ...string) (string, error), kind, id, force string, p purpose) (checked, error) {
	if err := checkID(kind, id); err != nil {
		return checked{}, err
	}
	scope := tmux.PaneScope{}
	switch kind {
	case "pane":
		scope.PaneID = id // tmux lists the pane's whole window: the cohort
	case "window":
		scope.WindowID = id
	case "session":
		scope.SessionID = id
	}
	want := tmux.Want{Panes: true, Clients: true, Scope: scope}
	var snap tmux.Snapshot
	var err error
	if run != nil {
		snap, err = tmux.SnapshotVia(ctx, run, want)
	} else {
		snap, err = s.tmux.Snapshot(ctx, want)
	}
	if err != nil {
		return checked{}, s.explain(ctx, err, kind, id)
	}
	c := checked{snap: snap}
	for _, pn := range snap.Panes {
		if kind != "pane" || pn.ID == id {
			c.panes = append(c.panes, pn)
		}
	}
	if len(c.panes) == 0 {
		return checked{}, fmt.Errorf("no %s %s on this server; call list_%ss for those that exist", kind, id, kind)
	}
	c.pane = c.panes[0]
	if force != "" && !s.caller.is(force, snap.Server.PID) {
		return checked{}, fmt.Errorf("force %q is not this MCP server's own pane; force only confirms acting on the caller's pane (list_panes marks it caller:true), so leave it out", force)
	}
	members := c.panes
	if p != forTeardown {
		members = s.cohortOf(c.pane, snap.Panes)
		for _, m := range members {
			c.cohort = append(c.cohort, m.ID)
		}
		if p == forPaste {
			members = members[:0:0]
			members = append(members, c.pane)
		}
		if p == forCommand && len(members) > 1 {
			return checked{}, fmt.Errorf("pane %s has synchronize-panes on, so a command typed there would also reach %s; turn it off with set_synchronize_panes first",
				c.pane.ID, strings.Join(without(c.cohort, c.pane.ID), ", "))
		}
	}
	for _, m := range members {
		if err := s.refusal(m, snap, force, p); err != nil {
			return checked{}, err
		}
	}
	return c, nil
}

// cohortOf is the panes that input to pn reaches: pn alone when its
// synchronize-panes is off, else every pane of its window with it on.
func (s *server) cohortOf(pn tmux.Pane, all []tmux.Pane) []tmux.Pane {
	if !pn.Synchronized {
		return []tmux.Pane{pn}
	}
	var out []tmux.Pane
	for _, o := range all {
		if o.WindowID == pn.WindowID && o.Synchronized {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b tmux.Pane) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// refusal says why pn must not receive p, or nil.
func (s *server) refusal(pn tmux.Pane, snap tmux.Snapshot, force string, p purpose) error {
	if s.caller.is(pn.ID, snap.Server.PID) && force != pn.ID {
		return fmt.Errorf("pane %s is the pane this MCP server runs in; acting on it could end or disturb this session; to do it anyway pass force:%q", pn.ID, pn.ID)
	}
	if p != forTeardown && s.enrollmentState(pn.ID, snap.Server.Generation) == enroll.StateInvited {
		return fmt.Errorf("%s: pane %s holds a pending tmux_run invitation, and enrolling is the person's act: only the person may type there until the invitation is used or expires (list_panes shows its enrollment); use another pane", codeInvitationPending, pn.ID)
	}
	if p != forTeardown {
		if pn.Dead {
			return fmt.Errorf("pane %s is dead (its program exited with status %d); respawn_pane starts it again", pn.ID, pn.DeadStatus)
		}
		if pn.InMode {
			mode := pn.Mode
			if mode == "" {
				mode = "a mode"
			}
			return fmt.Errorf("pane %s is in %s, so input would drive the mode instead of the program; a person may be reading it: ask them to leave it (q) or use another pane; no tool enters or leaves modes", pn.ID, mode)
		}
	}
	return s.attendedRefusal(pn, snap)
}

// attendedRefusal applies LIBTMUX_MCP_ATTENDED to a pane a person's
// client shows.
func (s *server) attendedRefusal(pn tmux.Pane, snap tmux.Snapshot) error {
	return attended(s.deps.Limits.Attended, pn, snap.Clients, time.Now())
}

// attended decides LIBTMUX_MCP_ATTENDED for pn, given the clients and the
// time now: a person's client (not a control client) that shows pn's
// window (and, in a zoomed window, pn itself) refuses always under
// "watched", and under "typing" only when its last key input is less than
// typingWindow before now. tmux reports client_activity in whole seconds,
// so "typing" refuses for 5 to 6 seconds after a key.
func attended(mode string, pn tmux.Pane, clients []tmux.AttachedClient, now time.Time) error {
	if mode == "ignore" {
		return nil
	}
	for _, cl := range clients {
		if cl.ControlMode || cl.WindowID != pn.WindowID || pn.WindowZoomed && !pn.Active {
			continue
		}
		switch mode {
		case "watched":
			return fmt.Errorf("pane %s is shown on %s, a person's client, and LIBTMUX_MCP_ATTENDED=watched refuses watched panes; use another pane, or ask the person", pn.ID, cl.Label())
		default: // typing
			if since := now.Sub(time.Unix(int64(cl.Activity), 0)); since < typingWindow {
				return fmt.Errorf("a person is typing on %s, which shows pane %s (last key %s ago); wait a few seconds and try again, or use another pane", cl.Label(), pn.ID, max(since, 0).Round(time.Second))
			}
		}
	}
	return nil
}

// without returns ids less one.
func without(ids []string, one string) []string {
	var out []string
	for _, id := range ids {
		if id != one {
			out = append(out, id)
		}
	}
	return out
}
