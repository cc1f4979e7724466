package tmux

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Want says what a Snapshot reads. The server's identity is always read.
type Want struct {
	Sessions bool
	Windows  bool
	Panes    bool
	Clients  bool
	Scope    PaneScope // narrows Windows and Panes
}

// Snapshot is what one tmux invocation reported: the commands run in one
// queue step, so the rows describe one moment.
type Snapshot struct {
	Server   ServerInfo
	Sessions []Session
	Windows  []Window
	Panes    []Pane
	Clients  []AttachedClient
}

// serverRow is the identity row every snapshot starts with. It is the one
// parser of the server's identity.
type serverRow struct {
	pid, start, sessions int
	version, socket      string
}

var serverFields = []field[serverRow]{
	num("pid", func(r *serverRow) *int { return &r.pid }),
	num("start_time", func(r *serverRow) *int { return &r.start }),
	num("server_sessions", func(r *serverRow) *int { return &r.sessions }),
	str("version", func(r *serverRow) *string { return &r.version }),
	str("socket_path", func(r *serverRow) *string { return &r.socket }),
}

// Snapshot reads the server identity and the rows asked for in a single
// tmux invocation. A server with no sessions answers empty lists.
func (c *Client) Snapshot(ctx context.Context, want Want) (Snapshot, error) {
	seps := NewSeparators()
	args, err := snapshotArgs(want, seps)
	if err != nil {
		return Snapshot{}, err
	}
	out, runErr := c.Run(ctx, args...)
	snap, _, err := snapshotResult(out, runErr, seps)
	return snap, err
}

// SnapshotVia is Snapshot with the one command line sent by run (a control
// connection's, say), which gets the argv with ";" between commands.
func SnapshotVia(ctx context.Context, run func(ctx context.Context, args ...string) (string, error), want Want) (Snapshot, error) {
	seps := NewSeparators()
	args, err := snapshotArgs(want, seps)
	if err != nil {
		return Snapshot{}, err
	}
	out, runErr := run(ctx, args...)
	snap, _, err := snapshotResult(out, runErr, seps)
	return snap, err
}

// snapshotResult parses a snapshot's output and tells an empty server from
// a failure. It also returns the raw rows of tags other than the snapshot's.
func snapshotResult(out string, runErr error, seps Separators) (Snapshot, map[string]string, error) {
	snap, sessions, extra, err := parseSnapshot(out, seps)
	if runErr != nil {
		// tmux answers "no current target" to the list commands of a
		// server without sessions; that is an empty server, not an error.
		var te *Error
		if err == nil && sessions == 0 && errors.As(runErr, &te) && strings.Contains(te.Stderr, "no current target") {
			return snap, extra, nil
		}
		return Snapshot{}, nil, runErr
	}
	return snap, extra, err
}

// snapshotArgs is the one tmux command line that reads want, printed with
// seps.
func snapshotArgs(want Want, seps Separators) ([]string, error) {
	args := []string{"display-message", "-p", "I" + seps.Field + format(serverFields, seps)}
	add := func(tag string, cmd ...string) {
		// Each row starts with its tag; format() ends it with the record
		// separator.
		n := len(cmd)
		cmd[n-1] = tag + seps.Field + cmd[n-1]
		args = append(append(args, ";"), cmd...)
	}
	if want.Sessions {
		add("S", "list-sessions", "-F", format(sessionFields, seps))
	}
	if want.Windows {
		cmd := []string{"list-windows"}
		switch {
		case want.Scope.SessionID != "":
			if !ValidSessionID(want.Scope.SessionID) {
				return nil, fmt.Errorf("session id %q is not of the form $N", want.Scope.SessionID)
			}
			cmd = append(cmd, "-t", want.Scope.SessionID)
		default:
			cmd = append(cmd, "-a")
		}
		add("W", append(cmd, "-F", format(windowFields, seps))...)
	}
	if want.Panes {
		cmd := []string{"list-panes"}
		switch {
		case want.Scope.PaneID != "":
			if !ValidPaneID(want.Scope.PaneID) {
				return nil, fmt.Errorf("pane id %q is not of the form %%N", want.Scope.PaneID)
			}
			cmd = append(cmd, "-t", want.Scope.PaneID)
		case want.Scope.WindowID != "":
			if !ValidWindowID(want.Scope.WindowID) {
				return nil, fmt.Errorf("window id %q is not of the form @N", want.Scope.WindowID)
			}
			cmd = append(cmd, "-t", want.Scope.WindowID)
		case want.Scope.SessionID != "":
			if !ValidSessionID(want.Scope.SessionID) {
				return nil, fmt.Errorf("session id %q is not of the form $N", want.Scope.SessionID)
			}
			cmd = append(cmd, "-s", "-t", want.Scope.SessionID)
		default:
			cmd = append(cmd, "-a")
		}
		add("P", append(cmd, "-F", format(paneFields, seps))...)
	}
	if want.Clients {
		add("C", "list-clients", "-F", format(clientFields, seps))
	}
	return args, nil
}

// snapshotTags are the record tags a snapshot parses itself.
var snapshotTags = map[string]bool{"I": true, "S": true, "W": true, "P": true, "C": true}

// parseSnapshot splits tagged records by kind and parses each. Records of
// other tags are returned as they are (without their separators' record
// end), for the caller that added them.
func parseSnapshot(out string, seps Separators) (Snapshot, int, map[string]string, error) {
	var snap Snapshot
	recs, err := seps.Records(out, 2)
	if err != nil {
		return snap, 0, nil, err
	}
	parts := map[string]*strings.Builder{}
	for _, rec := range recs {
		tag, body := rec[0], rec[1]
		b := parts[tag]
		if b == nil {
			b = &strings.Builder{}
			parts[tag] = b
		}
		b.WriteString(body + seps.Record)
	}
	text := func(tag string) string {
		if b := parts[tag]; b != nil {
			return b.String()
		}
		return ""
	}
	extra := map[string]string{}
	for tag := range parts {
		if !snapshotTags[tag] {
			extra[tag] = strings.TrimSuffix(text(tag), seps.Record)
		}
	}
	ids, err := parseRows(text("I"), serverFields, seps)
	if err != nil {
		return snap, 0, nil, err
	}
	if len(ids) != 1 {
		return snap, 0, nil, fmt.Errorf("tmux did not report its identity: %q", clip(out))
	}
	id := ids[0]
	snap.Server = ServerInfo{PID: id.pid, StartTime: id.start, SocketPath: id.socket, Generation: Generation(id.pid, id.start, id.socket), VersionText: id.version}
	var errs []error
	var e error
	snap.Sessions, e = parseRows(text("S"), sessionFields, seps)
	errs = append(errs, e)
	snap.Windows, e = parseRows(text("W"), windowFields, seps)
	errs = append(errs, e)
	snap.Panes, e = parseRows(text("P"), paneFields, seps)
	errs = append(errs, e)
	snap.Clients, e = parseRows(text("C"), clientFields, seps)
	errs = append(errs, e)
	return snap, id.sessions, extra, errors.Join(errs...)
}
