package fgproc

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 20: outside files that build only on Linux, no program code names
// /proc, except where a reason below says why that is sound. The
// conventional tools ask this package instead, which has a path for
// systems without /proc.
func TestNoProcOutsideLinuxFiles(t *testing.T) {
	allowed := map[string]string{
		"broker/dispatch.go":            "tmux_run only, which stops at startup off Linux (peercred.ErrNotSupported)",
		"internal/tmuxtest/tmuxtest.go": "a test helper (ExtraFDs), not shipped",
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_linux.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), `"/proc`) && allowed[rel] == "" {
			t.Errorf("%s reads /proc in a file that builds on every system; move it to a _linux.go file or ask package fgproc", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
