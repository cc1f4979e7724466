package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/libtmux/libtmux-mcp/internal/httpserve"
	"github.com/libtmux/libtmux-mcp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP serves cfg over Streamable HTTP on cfg.HTTPAddr (checked to be
// loopback by LoadConfig) until ctx ends; it returns the exit status.
func serveHTTP(ctx context.Context, cfg mcpserver.Config) int {
	ln, err := httpserve.Listen(cfg.HTTPAddr)
	if err != nil {
		fail(err)
		return 1
	}
	defer ln.Close()
	token, told := cfg.HTTPToken, "the token in LIBTMUX_MCP_HTTP_TOKEN"
	if token == "" {
		token = httpserve.NewToken()
		told = "token " + token
	}
	// No caller pane: an HTTP client is not inside the pane this process
	// was started from.
	cfg.CallerTMUX, cfg.CallerPane = "", ""
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	err = mcpserver.ServeWith(ctx, cfg, os.Stderr, func(ctx context.Context, srv *mcp.Server) error {
		fmt.Fprintf(os.Stderr, "libtmux-mcp: Streamable HTTP at http://%s%s; send Authorization: Bearer with %s\n",
			ln.Addr(), httpserve.Path, told)
		return httpserve.Serve(ctx, ln, token, srv, log)
	})
	if err != nil {
		fail(err)
		return 1
	}
	return 0
}
