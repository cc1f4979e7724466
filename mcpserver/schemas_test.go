package mcpserver

import (
	"context"
	"testing"
)

// TestUnknownArgumentsRefused: the published input schemas leave out
// additionalProperties:false, so the handler must refuse unknown names
// itself, before anything reaches tmux (this server has no tmux at all).
func TestUnknownArgumentsRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs := connectServer(t, ctx, New(ctx, Deps{Selection: Selection{Toolsets: Toolsets, Tools: ToolNames()}}))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_panes", map[string]any{"windowID": "@1"}, `list_panes has no argument "windowID"; its arguments are sessionId, windowId`},
		{"list_sessions", map[string]any{"all": true}, `list_sessions takes no arguments; remove "all"`},
		{"capture_pane", map[string]any{"paneId": "%1", "lines": 5}, `no argument "lines"`},
	} {
		callErr(t, cs, tc.tool, tc.args, tc.want)
	}
}
