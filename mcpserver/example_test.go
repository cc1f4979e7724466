package mcpserver_test

import (
	"context"
	"log"

	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Embed the tmux tools in a program of your own: pin a tmux client to a
// socket, let Ensure connect (starting a server when none runs), freeze a
// selection, and serve the returned *mcp.Server on any transport.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the handlers too

	client, err := tmux.NewClient(tmux.Route{SocketName: "agent"}, 0)
	if err != nil {
		log.Fatal(err)
	}
	startup, err := client.Ensure(ctx, tmux.Want{})
	if err != nil {
		log.Fatal(err)
	}
	sel, err := mcpserver.Select(startup.Provenance, []string{mcpserver.Inspect}, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpserver.New(ctx, mcpserver.Deps{Version: "embedded", Tmux: client, Startup: startup, Selection: sel})
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
