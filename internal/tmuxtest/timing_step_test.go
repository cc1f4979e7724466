package tmuxtest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTimingStepRunsEveryTimingTest keeps .ci/run's timing step true: every
// test that asserts a figure only under LIBTMUX_MCP_TIMING_TESTS=1 (it calls
// tmuxtest.Timing or tmuxtest.NeedTiming, itself or through a helper of its
// package) must be named by that step's -run pattern, or its figure is
// asserted nowhere.
func TestTimingStepRunsEveryTimingTest(t *testing.T) {
	root := filepath.Join("..", "..")
	script := ciRun(t)
	step := regexp.MustCompile(`LIBTMUX_MCP_TIMING_TESTS=1 go test [^\n]*-run '([^']+)'([^\n]*)`).FindSubmatch(script)
	if step == nil {
		t.Fatal(".ci/run has no step running go test -run '…' with LIBTMUX_MCP_TIMING_TESTS=1")
	}
	pattern, err := regexp.Compile(string(step[1]))
	if err != nil {
		t.Fatalf(".ci/run's timing step: %v", err)
	}
	var packages []string // as the step names them, ./dir
	for _, arg := range strings.Fields(string(step[2])) {
		packages = append(packages, filepath.Clean(arg))
	}
	tests := timingTests(t, root)
	if len(tests) == 0 {
		t.Fatal("found no test that calls tmuxtest.Timing or tmuxtest.NeedTiming; the search is broken")
	}
	for _, test := range tests {
		if !pattern.MatchString(test.name) || !slices.Contains(packages, test.dir) {
			t.Errorf("%s in ./%s asserts a figure only under LIBTMUX_MCP_TIMING_TESTS=1, but .ci/run's timing step (-run '%s'%s) does not run it: add it there", test.name, test.dir, step[1], step[2])
		}
	}
	t.Logf("%d tests assert figures under LIBTMUX_MCP_TIMING_TESTS=1: %v", len(tests), tests)
}

// timingTest is a test that asserts figures under LIBTMUX_MCP_TIMING_TESTS=1.
type timingTest struct {
	dir  string // its package's directory, relative to the module root
	name string
}

// timingTests lists the tests under root that call tmuxtest.Timing or
// tmuxtest.NeedTiming directly or through functions of their own package's
// test files.
func timingTests(t *testing.T, root string) []timingTest {
	t.Helper()
	byDir := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []timingTest
	for dir, files := range byDir {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		calls := map[string][]string{} // function -> names it calls
		timing := map[string]bool{}
		for _, f := range files {
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				name := fn.Name.Name
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					switch fun := call.Fun.(type) {
					case *ast.Ident:
						calls[name] = append(calls[name], fun.Name)
					case *ast.SelectorExpr:
						if pkg, ok := fun.X.(*ast.Ident); ok && pkg.Name == "tmuxtest" && (fun.Sel.Name == "Timing" || fun.Sel.Name == "NeedTiming") {
							timing[name] = true
						}
						calls[name] = append(calls[name], fun.Sel.Name)
					}
					return true
				})
			}
		}
		for grew := true; grew; { // a function calling a timing function is one too
			grew = false
			for fn, callees := range calls {
				if !timing[fn] && slices.ContainsFunc(callees, func(c string) bool { return timing[c] }) {
					timing[fn], grew = true, true
				}
			}
		}
		for fn := range timing {
			if strings.HasPrefix(fn, "Test") {
				out = append(out, timingTest{dir: rel, name: fn})
			}
		}
	}
	slices.SortFunc(out, func(a, b timingTest) int { return strings.Compare(a.dir+"."+a.name, b.dir+"."+b.name) })
	return out
}

// ciRun is .ci/run's text.
func ciRun(t *testing.T) []byte {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	return script
}
