package main

import (
	"context"
	"fmt"
	"os"

	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/internal/frame"
	"github.com/libtmux/libtmux-mcp/internal/httpserve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP serves cfg over Streamable HTTP on cfg.HTTPAddr (checked to be
// loopback by config.Load) until ctx ends; it returns the exit status.
func serveHTTP(ctx context.Context, cfg config.Config) int {
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
	log := newLogger(os.Stderr, cfg)
	err = serveWith(ctx, cfg, func(ctx context.Context, srv *mcp.Server, screen *frame.Screen, stopHandlers func()) error {
		fmt.Fprintf(os.Stderr, "libtmux-mcp: Streamable HTTP at http://%s%s; send Authorization: Bearer with %s\n",
			ln.Addr(), httpserve.Path, told)
		return httpserve.Serve(ctx, ln, token, srv, httpserve.Options{
			Limits:       httpserve.Limits(cfg.Transport),
			StopHandlers: stopHandlers,
			Screen:       screen,
			Logger:       log,
		})
	}, os.Stderr)
	if err != nil {
		fail(err)
		return 1
	}
	return 0
}
