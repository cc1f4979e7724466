package main

import (
	"log/slog"
	"os"

	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/internal/stdio"
)

// cancelAtEOF are the tools whose calls stdin EOF cancels at once (waits
// and runs, which could otherwise outlive their client by minutes); every
// other call read before EOF is answered first. Names of tools that do not
// exist (yet) match nothing.
var cancelAtEOF = []string{"tmux_run", "wait_for_text", "wait_for_channel", "run_shell_command", "capture_since"}

// stdioTransport serves stdin and stdout: a malformed frame is answered,
// not fatal, and stdin EOF answers the requests already read.
func stdioTransport(cfg config.Config) *stdio.Transport {
	return &stdio.Transport{
		CancelAtEOF: stdio.CancelTools(cancelAtEOF...),
		Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})),
	}
}
