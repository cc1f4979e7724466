package mcpserver

import (
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// goldenConfig selects every toolset and the given opt-in tools.
func goldenConfig(t *testing.T, ts *tmuxtest.Server, optIn []string) Config {
	return Config{Toolsets: Toolsets, EnableTools: optIn}
}
