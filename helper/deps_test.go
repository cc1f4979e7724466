package helper_test

import (
	"os/exec"
	"strings"
	"testing"
)

const (
	module        = "github.com/libtmux/libtmux-mcp"
	helperCommand = module + "/cmd/libtmux-mcp-helper"
	serverCommand = module + "/cmd/libtmux-mcp"
)

// helperDeps is everything outside the standard library the helper binary may link: it runs in
// every enrolled shell's session and stays resident there, so it stays small and static. Only
// the helper itself, its job codec, x/sys, and BLAKE3 (with the CPU feature detection BLAKE3
// pulls in).
var helperDeps = []string{
	module + "/cmd/libtmux-mcp-helper",
	module + "/helper",
	module + "/helper/job",
	"golang.org/x/sys/",
	"lukechampine.com/blake3",
	"github.com/klauspost/cpuid/v2",
}

// standard reports whether pkg is in the standard library (vendored packages included): its
// first path element has no dot.
func standard(pkg string) bool {
	first, _, _ := strings.Cut(strings.TrimPrefix(pkg, "vendor/"), "/")
	return !strings.Contains(first, ".") && !strings.HasPrefix(pkg, "vendor/golang.org/x/net")
}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderrOf(err))
	}
	return strings.Fields(string(out))
}

// TestHelperDependencies keeps the helper binary to an allowlist: no MCP SDK, no tmux client,
// no broker, and no net package (a static binary that starts fast needs neither cgo nor the
// resolver).
func TestHelperDependencies(t *testing.T) {
	found := false
	for _, dep := range deps(t, helperCommand) {
		found = found || dep == module+"/helper"
		if dep == "net" {
			t.Errorf("%s links package net; the helper reads fd 3 with plain system calls", helperCommand)
		}
		if standard(dep) {
			continue
		}
		allowed := false
		for _, a := range helperDeps {
			allowed = allowed || dep == a || strings.HasSuffix(a, "/") && strings.HasPrefix(dep, a) || strings.HasPrefix(dep, a+"/")
		}
		if !allowed {
			t.Errorf("%s depends on %s, which is not in the helper's allowlist", helperCommand, dep)
		}
	}
	if !found {
		t.Errorf("go list -deps %s does not list package helper", helperCommand)
	}
}

// TestServerDoesNotLinkTheRunner: the server speaks the job codec (helper/job) but never links
// the code that runs scripts.
func TestServerDoesNotLinkTheRunner(t *testing.T) {
	for _, dep := range deps(t, serverCommand) {
		if dep == module+"/helper" {
			t.Errorf("%s links %s; it should import only %s/helper/job", serverCommand, dep, module)
		}
	}
}

func stderrOf(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
