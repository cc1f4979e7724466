package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type sessionInfoParams struct {
	SessionID   string `json:"sessionId,omitempty" jsonschema:"the session id ($1)"`
	SessionName string `json:"sessionName,omitempty" jsonschema:"or the exact session name (no prefix matching)"`
}

type sessionInfoResult struct {
	Session sessionRow  `json:"session"`
	Windows []windowRow `json:"windows"`
}

type windowInfoParams struct {
	WindowID string `json:"windowId" jsonschema:"the window id (@2)"`
}

type windowInfoResult struct {
	Window windowRow `json:"window"`
	Panes  []paneRow `json:"panes"`
}

type paneInfoParams struct {
	PaneID string `json:"paneId" jsonschema:"the pane id (%3)"`
}

type paneInfoResult struct {
	Pane paneRow `json:"pane"`
}

func (s *server) addInfoTools() {
	addTool(s, toolSpec[sessionInfoParams, sessionInfoResult]{
		name:        "get_session_info",
		title:       "Session info",
		description: `One session and its windows, by id or exact name. Example: {"sessionId":"$0"} or {"sessionName":"build"}.`,
		capability:  metadataOnly,
		handle: func(ctx context.Context, _ *mcp.CallToolRequest, in sessionInfoParams) (sessionInfoResult, error) {
			if (in.SessionID == "") == (in.SessionName == "") {
				return sessionInfoResult{}, errors.New("give exactly one of sessionId ($1) or sessionName; call list_sessions to see both")
			}
			snap, err := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true, Windows: true})
			if err != nil {
				return sessionInfoResult{}, s.fail(err)
			}
			for _, ss := range snap.Sessions {
				if ss.ID == in.SessionID || in.SessionID == "" && ss.Name == in.SessionName {
					res := sessionInfoResult{Session: toSessionRow(ss), Windows: []windowRow{}}
					for _, w := range snap.Windows {
						if w.SessionID == ss.ID {
							res.Windows = append(res.Windows, toWindowRow(w))
						}
					}
					return res, nil
				}
			}
			what := "id " + in.SessionID
			if in.SessionID == "" {
				what = fmt.Sprintf("named %q", in.SessionName)
			}
			return sessionInfoResult{}, fmt.Errorf("no session %s on this server; call list_sessions for the %d that exist", what, len(snap.Sessions))
		},
	})
	addTool(s, toolSpec[windowInfoParams, windowInfoResult]{
		name:        "get_window_info",
		title:       "Window info",
		description: `One window and its panes. Example: {"windowId":"@1"}.`,
		capability:  metadataOnly,
		handle: func(ctx context.Context, _ *mcp.CallToolRequest, in windowInfoParams) (windowInfoResult, error) {
			if err := checkID("window", in.WindowID); err != nil {
				return windowInfoResult{}, err
			}
			scope := tmux.PaneScope{WindowID: in.WindowID}
			snap, err := s.tmux.Snapshot(ctx, tmux.Want{Windows: true, Panes: true, Clients: true, Scope: scope})
			if err != nil {
				return windowInfoResult{}, s.explain(ctx, err, "window", in.WindowID)
			}
			for _, w := range snap.Windows {
				if w.ID == in.WindowID {
					return windowInfoResult{Window: toWindowRow(w), Panes: s.paneRows(snap)}, nil
				}
			}
			return windowInfoResult{}, fmt.Errorf("no window %s on this server; call list_windows for the %d that exist", in.WindowID, len(snap.Windows))
		},
	})
	addTool(s, toolSpec[paneInfoParams, paneInfoResult]{
		name:        "get_pane_info",
		title:       "Pane info",
		description: `One pane's row, as list_panes reports it. Example: {"paneId":"%3"}.`,
		capability:  metadataOnly,
		handle: func(ctx context.Context, _ *mcp.CallToolRequest, in paneInfoParams) (paneInfoResult, error) {
			row, err := s.onePane(ctx, in.PaneID)
			return paneInfoResult{Pane: row}, err
		},
	})
}
