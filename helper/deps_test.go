package helper_test

import (
	"os/exec"
	"strings"
	"testing"
)

const helperCommand = "github.com/libtmux/libtmux-mcp/cmd/libtmux-mcp-helper"

// TestHelperDoesNotLinkMCPSDK keeps the helper binary, which runs inside every enrolled shell's
// session, free of the MCP SDK and everything it pulls in.
func TestHelperDoesNotLinkMCPSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", helperCommand).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", helperCommand, err, stderrOf(err))
	}
	deps := strings.Fields(string(out))
	found := false
	for _, dep := range deps {
		if strings.Contains(dep, "modelcontextprotocol") {
			t.Errorf("%s depends on %s; the helper must not link the MCP SDK", helperCommand, dep)
		}
		found = found || dep == "github.com/libtmux/libtmux-mcp/helper"
	}
	if !found {
		t.Errorf("go list -deps %s does not list package helper; got %q", helperCommand, deps)
	}
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
