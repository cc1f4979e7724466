package mcpserver

import (
	"os"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

func TestMain(m *testing.M) {
	tmuxtest.WaitingParallel()
	os.Exit(m.Run())
}
