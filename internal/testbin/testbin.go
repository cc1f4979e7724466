// Package testbin builds this module's two commands, libtmux-mcp and
// libtmux-mcp-helper, once per test process, so tests run the real
// binaries. When the tests run with -race the binaries are built with it
// too, so the race detector watches the server under test; otherwise the
// helper is built static (CGO_ENABLED=0), as the README tells users to.
//
// A test process that finds LIBTMUX_MCP_TEST_BINARIES (DirEnv) naming a
// directory that holds both programs uses them instead of building: CI
// builds them once for every tmux release's suite. Whoever sets it built
// them the way this package would (with -race for a -race test binary).
//
// It is for tests only: call Build from a test and Cleanup from TestMain.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

// Paths are the built programs.
type Paths struct {
	Server string // libtmux-mcp
	Helper string // libtmux-mcp-helper
	Dir    string // the directory holding both
}

// DirEnv names the variable holding a directory of already built binaries.
const DirEnv = "LIBTMUX_MCP_TEST_BINARIES"

var (
	once  sync.Once
	paths Paths
	err   error
	owned bool // paths.Dir was made here, and Cleanup removes it
)

// Race reports whether this test binary was built with -race, read from its
// own build settings (the helper's tests tell by a build tag instead:
// helper/race_test.go).
func Race() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// Build compiles both commands on first use and returns their paths; a
// failed build fails every test that asks.
func Build(t testing.TB) Paths {
	t.Helper()
	once.Do(func() { paths, err = build() })
	if err != nil {
		t.Fatalf("build the binaries under test: %v", err)
	}
	return paths
}

// Cleanup removes the built binaries; call it from TestMain after m.Run.
func Cleanup() {
	if owned && paths.Dir != "" {
		os.RemoveAll(paths.Dir)
	}
}

func build() (Paths, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		p := Paths{Dir: dir, Server: filepath.Join(dir, "libtmux-mcp"), Helper: filepath.Join(dir, "libtmux-mcp-helper")}
		for _, f := range []string{p.Server, p.Helper} {
			fi, err := os.Stat(f)
			if err != nil {
				return Paths{}, fmt.Errorf("%s=%s: %w", DirEnv, dir, err)
			}
			if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
				return Paths{}, fmt.Errorf("%s=%s: %s is not an executable file", DirEnv, dir, f)
			}
		}
		return p, nil
	}
	owned = true
	root, err := moduleRoot()
	if err != nil {
		return Paths{}, err
	}
	dir, err := os.MkdirTemp("", "libtmux-mcp-bin-")
	if err != nil {
		return Paths{}, err
	}
	p := Paths{Dir: dir, Server: filepath.Join(dir, "libtmux-mcp"), Helper: filepath.Join(dir, "libtmux-mcp-helper")}
	race := Race()
	for _, b := range []struct{ out, pkg string }{
		{p.Server, "./cmd/libtmux-mcp"},
		{p.Helper, "./cmd/libtmux-mcp-helper"},
	} {
		args := []string{"build", "-o", b.out}
		if race {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, b.pkg)...)
		cmd.Dir = root
		cmd.Env = os.Environ()
		if !race && b.out == p.Helper {
			// The helper starts once per enrolled shell; a static binary
			// starts faster and needs no libc of the right version.
			cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return Paths{}, fmt.Errorf("go %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out)
		}
	}
	return p, nil
}

// moduleRoot finds the directory holding go.mod, from the test's working
// directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}
