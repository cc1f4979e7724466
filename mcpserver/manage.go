package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// This file holds what the manage and teardown tools share: checks of the
// text they hand to tmux, session references, and one way to run a command
// and read back what tmux stored, in the same invocation.

// sessionRef names a session by id or by exact name; tools embed it where a
// session is the target.
type sessionRef struct {
	SessionID   string `json:"sessionId,omitempty"`
	SessionName string `json:"sessionName,omitempty" jsonschema:"or exact name"`
}

// target is the tmux target of r: its id, or =name (exact match, never a
// prefix). It refuses a malformed id and a reference that names neither or
// both.
func (r sessionRef) target() (string, error) {
	if (r.SessionID == "") == (r.SessionName == "") {
		return "", errors.New("give exactly one of sessionId ($1) or sessionName; call list_sessions to see both")
	}
	if r.SessionID != "" {
		return r.SessionID, checkID("session", r.SessionID)
	}
	if err := checkPrintableText("sessionName", r.SessionName); err != nil {
		return "", err
	}
	// In a target, ':' and '.' would name a window or pane of another
	// session: such a name is looked up instead (sessionTarget).
	if strings.ContainsAny(r.SessionName, ":.") {
		return "", errNameNeedsLookup
	}
	// tmux reads "=$1" as the id $1, whatever the session's name.
	if strings.HasPrefix(r.SessionName, "$") {
		return "", fmt.Errorf("sessionName %q starts with '$', which tmux reads as a session id; give the session's id as sessionId (list_sessions shows it)", r.SessionName)
	}
	return "=" + r.SessionName, nil
}

// errNameNeedsLookup is target's answer for a name holding ':' or '.'.
var errNameNeedsLookup = errors.New("the session name holds ':' or '.'")

// sessionTarget is r's tmux target. A name holding ':' or '.' (which tmux
// 3.7c keeps in session names, and 3.2a to 3.6a store as '_') cannot be a
// target, since tmux reads it as a window or pane: its session is looked
// up among the sessions by exact name, and its id is the target.
func (s *server) sessionTarget(ctx context.Context, r sessionRef) (string, error) {
	t, err := r.target()
	if !errors.Is(err, errNameNeedsLookup) {
		return t, err
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true})
	if err != nil {
		return "", s.fail(err)
	}
	for _, sess := range snap.Sessions {
		if sess.Name == r.SessionName {
			return sess.ID, nil
		}
	}
	return "", fmt.Errorf("no session is named %q (tmux before 3.7 stores ':' and '.' in session names as '_'); call list_sessions for the %d names as stored", r.SessionName, len(snap.Sessions))
}

// what names r in an error message.
func (r sessionRef) what() string {
	if r.SessionID != "" {
		return r.SessionID
	}
	return fmt.Sprintf("named %q", r.SessionName)
}

// resolveSession returns r's session id, asking tmux for it when r is a name.
func (s *server) resolveSession(ctx context.Context, r sessionRef) (string, error) {
	t, err := s.sessionTarget(ctx, r)
	if err != nil || r.SessionID != "" || strings.HasPrefix(t, "$") {
		return t, err
	}
	// display-message answers nothing, successfully, for a missing
	// target; list-windows fails with tmux's "can't find session".
	out, err := s.tmux.Run(ctx, "list-windows", "-t", tmux.Arg(t), "-F", "#{session_id}")
	if err != nil {
		return "", s.explainSession(ctx, err, r)
	}
	id, _, _ := strings.Cut(out, "\n")
	return id, nil
}

// explainSession is explain for a session given by id or name.
func (s *server) explainSession(ctx context.Context, err error, r sessionRef) error {
	if r.SessionID != "" || !errors.Is(err, tmux.ErrNotFound) {
		return s.explainTargets(ctx, err, target{"session", r.SessionID})
	}
	snap, serr := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true})
	if serr != nil {
		return fmt.Errorf("no session %s on this server; call list_sessions for those that exist", r.what())
	}
	return fmt.Errorf("no session %s on this server; call list_sessions for the %d that exist", r.what(), len(snap.Sessions))
}

// checkPrintableText refuses text tmux would mangle or refuse: control characters
// (tmux stores them escaped in names and drops titles that hold them) and
// invalid UTF-8. arg names the argument in the message.
func checkPrintableText(arg, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s is not valid UTF-8; tmux would not store it as given", arg)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return fmt.Errorf("%s contains the control character %U; tmux would store it rewritten (or not at all), so use printable text", arg, r)
		}
	}
	return nil
}

// checkName is checkPrintableText for a name that must not be empty.
func checkName(arg, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty; give the name to set", arg)
	}
	return checkPrintableText(arg, v)
}

// formatArg is caller text for an argument that tmux 3.3a expands as a
// format: # doubled, and a trailing ';' kept as text. Every command the
// manage tools pass a name, title or directory to expands formats in 3.3a
// (new-session -s and -n, new-window -n, rename-session, rename-window,
// select-pane -T, -c of new-session, new-window and split-window), so each
// such argument is doubled; manage_test.go proves it per argument.
func formatArg(s string) string { return tmux.Arg(tmux.Literal(s)) }

// target is one id a command acts on, with its kind (pane, window,
// session).
type target struct{ kind, id string }

// explainTargets turns a tmux failure of a command with these targets
// into an error that names the recovery: for a missing target, the one
// tmux's message ends with (tmux says "can't find pane: %9"), with the
// tool that lists them; for anything else, what tmux said, without the
// command line.
func (s *server) explainTargets(ctx context.Context, err error, targets ...target) error {
	var te *tmux.Error
	if !errors.As(err, &te) {
		return err
	}
	if !errors.Is(err, tmux.ErrNotFound) && !errors.Is(err, tmux.ErrNoServer) {
		if msg := strings.TrimSpace(te.Stderr); msg != "" {
			return fmt.Errorf("tmux refused: %s", msg)
		}
		return err
	}
	msg := strings.TrimSpace(te.Stderr)
	for _, t := range targets {
		if strings.HasSuffix(msg, " "+t.id) {
			return s.explain(ctx, err, t.kind, t.id)
		}
	}
	return s.explain(ctx, err, targets[0].kind, targets[0].id)
}

// optionScope is where a session option was set and what tmux reports
// there afterwards.
type optionScope struct{ name, value string }

// setSessionOption sets a session option on sessionID, or globally when it
// is empty, and reads the value back in the same tmux invocation. value is
// one this server made (on, off, a number), never the caller's text.
func (s *server) setSessionOption(ctx context.Context, sessionID, option, value string) (optionScope, error) {
	scope := []string{"-g"}
	name := "global"
	if sessionID != "" {
		if err := checkID("session", sessionID); err != nil {
			return optionScope{}, err
		}
		scope, name = []string{"-t", sessionID}, sessionID
	}
	args := append(append([]string{"set-option"}, scope...), option, value, ";", "show-options", "-v")
	args = append(append(args, scope...), option)
	out, err := s.tmux.Run(ctx, args...)
	if err != nil {
		if sessionID == "" {
			return optionScope{}, s.fail(err)
		}
		return optionScope{}, s.explain(ctx, err, "session", sessionID)
	}
	return optionScope{name: name, value: strings.TrimSpace(out)}, nil
}

// removedResult is what a kill removed: pane, window and session ids
// (their sigils tell them apart), panes first.
type removedResult struct {
	Removed []string `json:"removed" jsonschema:"ids: %pane, @window, $session"`
}

// sessionsGone adds sessionID to res when the kill took its last window
// with it (tmux then ends the session).
func (s *server) sessionsGone(ctx context.Context, res removedResult, sessionID string) removedResult {
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true})
	if err != nil {
		if errors.Is(err, tmux.ErrNoServer) {
			// That was the last session, and the server exited.
			res.Removed = append(res.Removed, sessionID)
		}
		return res
	}
	for _, ss := range snap.Sessions {
		if ss.ID == sessionID {
			return res
		}
	}
	res.Removed = append(res.Removed, sessionID)
	return res
}

// storedNote tells the caller when tmux stored a name other than the one
// given: it turns ':' and '.' in session names into '_' and stores a
// backslash in a name as two.
func storedNote(given, stored string) string {
	if given == stored {
		return ""
	}
	return fmt.Sprintf("tmux stored the name as %q, not %q; targets by name need the stored one", stored, given)
}
