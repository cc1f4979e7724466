package main

import (
	"os"

	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/internal/stdio"
	"github.com/libtmux/libtmux-mcp/mcpserver"
)

// stdioTransport serves stdin and stdout: a malformed frame is answered,
// not fatal, and stdin EOF answers the requests already read, except calls
// of the blocking tools (waits and runs, which could otherwise outlive
// their client by minutes): those it cancels at once.
func stdioTransport(cfg config.Config) *stdio.Transport {
	return &stdio.Transport{
		MaxFrame:    cfg.Transport.MaxFrame,
		CancelAtEOF: stdio.CancelTools(mcpserver.BlockingTools()...),
		Logger:      newLogger(os.Stderr, cfg),
	}
}
