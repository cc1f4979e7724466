package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/testbin"
)

// isolatedEnv names the test that a copy of this test binary runs alone (see isolated).
const isolatedEnv = "LIBTMUX_MCP_TEST_ISOLATED"

// isolated runs the calling test alone, in a process of its own: this test binary again, with
// -test.run naming only it. The leak tests measure their own process (goroutines, open fds,
// child processes), which other tests running beside them would disturb; so isolated, they
// and the rest of the package run in parallel. It returns true in that process, where the
// test's body goes on, and false in this one, once the other process has ended; its failure
// and its output are this test's.
func isolated(t *testing.T) bool {
	t.Helper()
	if os.Getenv(isolatedEnv) == t.Name() {
		return true
	}
	t.Parallel()
	args := []string{"-test.run", "^" + t.Name() + "$", "-test.count", "1", "-test.v"}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout", time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), isolatedEnv+"="+t.Name(), testbin.Env(t))
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil || !strings.Contains(text, "--- PASS: "+t.Name()) {
		t.Fatalf("%s alone in process (%v):\n%s", t.Name(), err, text)
	}
	t.Logf("%s alone in a process of its own:\n%s", t.Name(), text)
	return false
}
