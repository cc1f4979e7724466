// Command libtmux-mcp is an MCP server over stdio (or, with --http,
// Streamable HTTP on a loopback address) that gives an AI agent a tmux
// server. Run libtmux-mcp --help for its flags and variables.
//
// Stdout carries only JSON-RPC while serving; every message for people goes
// to stderr. A configuration error stops startup before tmux is contacted,
// with one line on stderr and exit status 2.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/libtmux/libtmux-mcp/enroll/request"
	"github.com/libtmux/libtmux-mcp/internal/config"
	"github.com/libtmux/libtmux-mcp/mcpserver"
)

func main() {
	resumeGC := pauseGC()
	time.AfterFunc(gcPause, resumeGC)
	os.Exit(run())
}

// run returns the exit status: 0 served or answered --help/--version,
// 1 failed while serving, 2 refused the configuration. The enroll and
// status commands have their own (package enroll/request).
func run() int {
	// Commands a person types in a pane (eval "$(libtmux-mcp enroll)", libtmux-mcp status).
	if request.IsCommand(os.Args[1:]) {
		return request.Main(os.Args[1:], request.Env{
			TMUX: os.Getenv("TMUX"), Pane: os.Getenv("TMUX_PANE"),
			Stdout: os.Stdout, Stderr: os.Stderr, StdoutFD: os.Stdout.Fd(),
		})
	}
	names := config.Names{Tools: mcpserver.ToolNames(), Toolsets: mcpserver.Toolsets}
	cfg, err := config.Load(os.Args[1:], os.LookupEnv, names)
	switch {
	case errors.Is(err, config.ErrHelp):
		fmt.Print(config.Usage())
		return 0
	case errors.Is(err, config.ErrVersion):
		fmt.Println("libtmux-mcp", config.Version)
		return 0
	case err != nil:
		fail(err)
		return 2
	}

	// SIGTERM and SIGINT end the context: serve stops its work, removes
	// only its own files and returns nil.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if cfg.HTTPAddr != "" {
		return serveHTTP(ctx, cfg)
	}
	if err := serve(ctx, cfg, stdioTransport(cfg), os.Stderr); err != nil {
		fail(err)
		return 1
	}
	return 0
}

// fail prints err as one line on stderr.
func fail(err error) {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintln(os.Stderr, "libtmux-mcp: "+msg)
}
