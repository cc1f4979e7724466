package tmuxtest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// TestCIRunsTheLoadTests: a plain go test leaves the load tests out
// (NeedLoad), so CI must ask for them before its first go test, or they
// would run nowhere.
func TestCIRunsTheLoadTests(t *testing.T) {
	s := string(ciRun(t))
	asks := strings.Index(s, "\nexport "+tmuxtest.RequireEnv+"=1\n")
	firstTest := strings.Index(s, "\ngo test ")
	if firstTest < 0 {
		t.Fatal(".ci/run runs no go test; the search is broken")
	}
	if asks < 0 || asks > firstTest {
		t.Errorf(".ci/run does not export %s=1 before its first go test: the load tests (%s) would be skipped there", tmuxtest.RequireEnv, tmuxtest.LoadEnv)
	}
}

// TestSuiteJobSetsReleaseSuite: the release suites skip the tests whose
// subject no tmux release changes (NotPerRelease) only if .ci/suite-job
// sets the variable NotPerRelease reads.
func TestSuiteJobSetsReleaseSuite(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".ci", "suite-job"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^export [^\n]*\b` + tmuxtest.ReleaseSuiteEnv + `=1\b`).Match(b) {
		t.Errorf(".ci/suite-job does not export %s=1: every release suite would run the tests that skip there (tmuxtest.NotPerRelease)", tmuxtest.ReleaseSuiteEnv)
	}
}
