package tmux

import "regexp"

// Session is one row of list-sessions.
type Session struct {
	ID       string // $1
	Name     string
	Windows  int
	Attached int // clients attached, control clients included
	Created  int // unix seconds
}

// Window is one row of list-windows.
type Window struct {
	ID          string // @2
	SessionID   string
	SessionName string
	Index       int
	Name        string
	Active      bool
	Width       int
	Height      int
	Panes       int
	Layout      string
	Zoomed      bool
}

// Pane is one row of list-panes.
type Pane struct {
	ID             string // %3
	SessionID      string
	SessionName    string
	WindowID       string
	WindowName     string
	WindowIndex    int
	Index          int
	Width          int
	Height         int
	Active         bool
	CurrentCommand string
	PID            int
	Dead           bool
	DeadStatus     int
	InMode         bool
	Mode           string // the mode's name (copy-mode, view-mode…) while InMode
	Synchronized   bool
	Title          string
	CursorX        int
	CursorY        int
	HistorySize    int
	CurrentPath    string
	TTY            string // the pane's terminal (/dev/pts/3), its shell's controlling terminal
	WindowZoomed   bool   // the window shows only its active pane
}

// AttachedClient is one row of list-clients: a terminal or a control client.
type AttachedClient struct {
	Name        string
	TTY         string
	ControlMode bool
	Activity    int // unix seconds of the last key input
	SessionID   string
	WindowID    string // the window the client shows
}

// Label names the client for a person: its terminal, or its name when it
// has none.
func (c AttachedClient) Label() string {
	if c.TTY != "" {
		return c.TTY
	}
	return c.Name
}

var sessionFields = []field[Session]{
	str("session_id", func(r *Session) *string { return &r.ID }),
	num("session_windows", func(r *Session) *int { return &r.Windows }),
	num("session_attached", func(r *Session) *int { return &r.Attached }),
	num("session_created", func(r *Session) *int { return &r.Created }),
	str("session_name", func(r *Session) *string { return &r.Name }),
}

var windowFields = []field[Window]{
	str("window_id", func(r *Window) *string { return &r.ID }),
	str("session_id", func(r *Window) *string { return &r.SessionID }),
	num("window_index", func(r *Window) *int { return &r.Index }),
	flag("window_active", func(r *Window) *bool { return &r.Active }),
	num("window_width", func(r *Window) *int { return &r.Width }),
	num("window_height", func(r *Window) *int { return &r.Height }),
	num("window_panes", func(r *Window) *int { return &r.Panes }),
	str("window_layout", func(r *Window) *string { return &r.Layout }),
	flag("window_zoomed_flag", func(r *Window) *bool { return &r.Zoomed }),
	str("session_name", func(r *Window) *string { return &r.SessionName }),
	str("window_name", func(r *Window) *string { return &r.Name }),
}

var paneFields = []field[Pane]{
	// The zoom flag is read with every pane so that watched panes can be
	// told without another call.
	flag("window_zoomed_flag", func(r *Pane) *bool { return &r.WindowZoomed }),
	str("pane_id", func(r *Pane) *string { return &r.ID }),
	str("session_id", func(r *Pane) *string { return &r.SessionID }),
	str("window_id", func(r *Pane) *string { return &r.WindowID }),
	num("window_index", func(r *Pane) *int { return &r.WindowIndex }),
	num("pane_index", func(r *Pane) *int { return &r.Index }),
	num("pane_width", func(r *Pane) *int { return &r.Width }),
	num("pane_height", func(r *Pane) *int { return &r.Height }),
	flag("pane_active", func(r *Pane) *bool { return &r.Active }),
	num("pane_pid", func(r *Pane) *int { return &r.PID }),
	flag("pane_dead", func(r *Pane) *bool { return &r.Dead }),
	num("pane_dead_status", func(r *Pane) *int { return &r.DeadStatus }),
	flag("pane_in_mode", func(r *Pane) *bool { return &r.InMode }),
	flag("pane_synchronized", func(r *Pane) *bool { return &r.Synchronized }),
	num("cursor_x", func(r *Pane) *int { return &r.CursorX }),
	num("cursor_y", func(r *Pane) *int { return &r.CursorY }),
	num("history_size", func(r *Pane) *int { return &r.HistorySize }),
	str("pane_mode", func(r *Pane) *string { return &r.Mode }),
	str("session_name", func(r *Pane) *string { return &r.SessionName }),
	str("window_name", func(r *Pane) *string { return &r.WindowName }),
	str("pane_title", func(r *Pane) *string { return &r.Title }),
	str("pane_current_command", func(r *Pane) *string { return &r.CurrentCommand }),
	str("pane_current_path", func(r *Pane) *string { return &r.CurrentPath }),
	str("pane_tty", func(r *Pane) *string { return &r.TTY }),
}

var clientFields = []field[AttachedClient]{
	flag("client_control_mode", func(r *AttachedClient) *bool { return &r.ControlMode }),
	num("client_activity", func(r *AttachedClient) *int { return &r.Activity }),
	str("session_id", func(r *AttachedClient) *string { return &r.SessionID }),
	str("window_id", func(r *AttachedClient) *string { return &r.WindowID }),
	str("client_tty", func(r *AttachedClient) *string { return &r.TTY }),
	str("client_name", func(r *AttachedClient) *string { return &r.Name }),
}

var (
	paneIDPattern    = regexp.MustCompile(`^%[0-9]{1,10}$`)
	windowIDPattern  = regexp.MustCompile(`^@[0-9]{1,10}$`)
	sessionIDPattern = regexp.MustCompile(`^\$[0-9]{1,10}$`)
)

// ValidPaneID reports whether s has the shape of a pane id (%3).
func ValidPaneID(s string) bool { return paneIDPattern.MatchString(s) }

// ValidWindowID reports whether s has the shape of a window id (@2).
func ValidWindowID(s string) bool { return windowIDPattern.MatchString(s) }

// ValidSessionID reports whether s has the shape of a session id ($1).
func ValidSessionID(s string) bool { return sessionIDPattern.MatchString(s) }

// PaneScope narrows a listing: a pane id (%3: the panes of its window), a
// window id (@2), a session id ($1), or nothing for the whole server.
type PaneScope struct {
	SessionID string
	WindowID  string
	PaneID    string
}
