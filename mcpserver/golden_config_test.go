package mcpserver

import (
	"path/filepath"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// goldenConfig selects every toolset and the given opt-in tools; tmux_run
// gets one invited pane so that it can start.
func goldenConfig(t *testing.T, ts *tmuxtest.Server, optIn []string) Config {
	pane := ts.NewSession("golden", "sh")
	return Config{
		Toolsets:    Toolsets,
		EnableTools: optIn,
		EnrollPanes: []EnrollPane{{Pane: pane, File: filepath.Join(ts.Dir, "enroll.zsh")}},
		Helper:      "/bin/true",
	}
}
