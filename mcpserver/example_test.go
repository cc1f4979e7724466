package mcpserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Embed the tmux tools in a program of your own: pin a tmux client to a
// socket, freeze a selection, and serve the returned *mcp.Server on any
// transport. The zero Limits are the defaults, control mode included.
//
// A real program also passes what client.Ensure learned as Deps.Startup (or
// what client.EnsureLater returns as Deps.Pending) and serves
// &mcp.StdioTransport{}. This one contacts no tmux: it lists the tools over
// an in-memory transport, and listings need nothing of tmux.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the handlers too

	client, err := tmux.NewClient(tmux.Route{SocketName: "agent"}, 0) // contacts nothing
	if err != nil {
		log.Fatal(err)
	}
	sel, err := mcpserver.Select(tmux.Provenance{}, []string{mcpserver.Inspect}, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpserver.New(ctx, mcpserver.Deps{Version: "embedded", Tmux: client, Selection: sel})

	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	go srv.Run(ctx, serverEnd)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "0"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	tools, readOnly := 0, 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		tools++
		if tool.Annotations.ReadOnlyHint {
			readOnly++
		}
	}
	fmt.Printf("%d tools, %d of them read-only\n", tools, readOnly)
	// Output: 17 tools, 17 of them read-only
}
