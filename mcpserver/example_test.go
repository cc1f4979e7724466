package mcpserver_test

import (
	"context"
	"log"

	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Embed the tmux tools in a program of your own: New returns an
// *mcp.Server for the configuration, already connected to tmux (a server
// is started on the socket when none runs), to be run on any transport.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the handlers too

	srv, err := mcpserver.New(ctx, mcpserver.Config{
		Version:  "embedded",
		Route:    tmux.Route{SocketName: "agent"},
		Toolsets: []string{mcpserver.Inspect},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil {
		log.Print(err)
	}
}
