package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s: protocol error %v", tc.tool, err)
		}
		text := ""
		for _, c := range res.Content {
			if tx, ok := c.(*mcp.TextContent); ok {
				text += tx.Text
			}
		}
		if !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: isError=%v %q; want a tool error containing %q", tc.tool, tc.args, res.IsError, text, tc.want)
		}
	}
}
