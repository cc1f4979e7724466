package mcpserver

import (
	"context"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type serverInfoParams struct{}

type serverInfoResult struct {
	Socket           string          `json:"socket" jsonschema:"the socket path"`
	Provenance       tmux.Provenance `json:"provenance" jsonschema:"state new or existing; config minimal or other"`
	TmuxVersion      string          `json:"tmuxVersion"`
	ServerPID        int             `json:"serverPid"`
	ServerGeneration string          `json:"serverGeneration" jsonschema:"changes when the server restarts"`
	Sessions         int             `json:"sessions"`
	Windows          int             `json:"windows"`
	Panes            int             `json:"panes"`
	Toolsets         []string        `json:"toolsets" jsonschema:"the toolsets this server was started with"`
}

func getServerInfoTool() tool {
	return &typedTool[serverInfoParams, serverInfoResult]{toolSpec: toolSpec{
		name:        "get_server_info",
		toolset:     Inspect,
		title:       "Server info",
		description: "Which tmux server this is, its counts and toolsets. Call it first.",
		capability:  metadataOnly,
	}, handle: (*server).serverInfo}
}

func (s *server) serverInfo(ctx context.Context, _ *mcp.CallToolRequest, _ serverInfoParams) (serverInfoResult, error) {
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Sessions: true, Windows: true, Panes: true})
	if err != nil {
		return serverInfoResult{}, s.fail(err)
	}
	return serverInfoResult{
		Socket:           snap.Server.SocketPath,
		Provenance:       s.prov,
		TmuxVersion:      s.startup.Version.Text,
		ServerPID:        snap.Server.PID,
		ServerGeneration: snap.Server.Generation,
		Sessions:         len(snap.Sessions),
		Windows:          len(snap.Windows),
		Panes:            len(snap.Panes),
		Toolsets:         s.sel.Toolsets,
	}, nil
}
