package mcpserver

import (
	"github.com/libtmux/libtmux-mcp/internal/panerecord"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// sessionRow is a session as tools report it.
type sessionRow struct {
	SessionID string `json:"sessionId" jsonschema:"session id, like $1"`
	Name      string `json:"name" jsonschema:"the name exactly as tmux reports it"`
	Windows   int    `json:"windows"`
	Attached  int    `json:"attached" jsonschema:"clients attached, control clients included"`
	Created   int    `json:"created" jsonschema:"unix seconds"`
}

// windowRow is a window as tools report it.
type windowRow struct {
	WindowID    string `json:"windowId" jsonschema:"window id, like @2"`
	SessionID   string `json:"sessionId"`
	SessionName string `json:"sessionName"`
	Index       int    `json:"index"`
	Name        string `json:"name"`
	Active      bool   `json:"active"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Panes       int    `json:"panes"`
	Layout      string `json:"layout"`
	Zoomed      bool   `json:"zoomed"`
}

// paneRow is a pane as tools report it.
type paneRow struct {
	PaneID           string            `json:"paneId" jsonschema:"pane id, like %3: the target of every pane tool"`
	SessionID        string            `json:"sessionId"`
	SessionName      string            `json:"sessionName"`
	WindowID         string            `json:"windowId"`
	WindowName       string            `json:"windowName"`
	Index            int               `json:"index"`
	Width            int               `json:"width"`
	Height           int               `json:"height"`
	Active           bool              `json:"active"`
	CurrentCommand   string            `json:"currentCommand"`
	CurrentPath      string            `json:"currentPath"`
	Title            string            `json:"title"`
	PID              int               `json:"pid"`
	Dead             bool              `json:"dead"`
	InMode           bool              `json:"inMode" jsonschema:"a client mode such as copy mode is active; input may not reach the program"`
	Caller           bool              `json:"caller" jsonschema:"this is the pane the MCP server itself runs in"`
	Watched          bool              `json:"watched" jsonschema:"a person's client currently shows this pane"`
	Enrollment       string            `json:"enrollment" jsonschema:"tmux_run enrollment: none, invited, enrolled or lost"`
	ServerGeneration string            `json:"serverGeneration" jsonschema:"changes when the tmux server restarts; tmux_run targets carry it"`
	Claim            *panerecord.Shown `json:"claim,omitempty" jsonschema:"the libtmux-mcp process running a command in this pane (one per pane, across processes)"`
}

func toSessionRow(s tmux.Session) sessionRow {
	return sessionRow{SessionID: s.ID, Name: s.Name, Windows: s.Windows, Attached: s.Attached, Created: s.Created}
}

func toWindowRow(w tmux.Window) windowRow {
	return windowRow{
		WindowID: w.ID, SessionID: w.SessionID, SessionName: w.SessionName, Index: w.Index, Name: w.Name,
		Active: w.Active, Width: w.Width, Height: w.Height, Panes: w.Panes, Layout: w.Layout, Zoomed: w.Zoomed,
	}
}

// paneRows converts the panes of snap, marking the caller and the panes a
// person's client shows. Control clients are programs, not people.
func (s *server) paneRows(snap tmux.Snapshot) []paneRow {
	shown := map[string]bool{} // window ids shown by a person's client
	for _, c := range snap.Clients {
		if !c.ControlMode && c.WindowID != "" {
			shown[c.WindowID] = true
		}
	}
	rows := make([]paneRow, 0, len(snap.Panes))
	for _, p := range snap.Panes {
		rows = append(rows, paneRow{
			PaneID: p.ID, SessionID: p.SessionID, SessionName: p.SessionName, WindowID: p.WindowID,
			WindowName: p.WindowName, Index: p.Index, Width: p.Width, Height: p.Height, Active: p.Active,
			CurrentCommand: p.CurrentCommand, CurrentPath: p.CurrentPath, Title: p.Title, PID: p.PID,
			Dead: p.Dead, InMode: p.InMode,
			Caller:           s.caller.is(p.ID, snap.Server.PID),
			Watched:          shown[p.WindowID] && (!p.WindowZoomed || p.Active),
			Enrollment:       s.enrollmentState(p.ID, snap.Server.Generation),
			ServerGeneration: snap.Server.Generation,
			Claim:            s.claimOf(p.ID, snap.Server.PID),
		})
	}
	return rows
}
