package fgproc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

func TestState(t *testing.T) {
	shell := proc{PID: 100, PPID: 1, PGID: 100, TPGID: 100}
	for _, c := range []struct {
		why   string
		shell proc
		kids  []proc
		want  State
	}{
		{"idle: the shell leads the foreground group and has no child", shell, nil, AtPrompt},
		{"a background job of a job-control shell is in a group of its own", shell, []proc{{PID: 101, PPID: 100, PGID: 101, TPGID: 100}}, AtPrompt},
		{"a job in the foreground: the terminal belongs to another group", proc{PID: 100, PPID: 1, PGID: 100, TPGID: 101}, []proc{{PID: 101, PPID: 100, PGID: 101, TPGID: 101}}, ChildInForeground},
		{"no job control (bash -c 'cat; …'): the child runs in the shell's group", shell, []proc{{PID: 101, PPID: 100, PGID: 100, TPGID: 100}}, ChildInForeground},
		{"a subshell is its own job, so the terminal belongs to it", proc{PID: 100, PPID: 1, PGID: 100, TPGID: 102}, []proc{{PID: 102, PPID: 100, PGID: 102, TPGID: 102}}, ChildInForeground},
		{"starting: the terminal is not the shell's yet, nor a child's", proc{PID: 100, PPID: 1, PGID: 100, TPGID: 99}, nil, NotForeground},
		{"no controlling terminal (procps says -1)", proc{PID: 100, PPID: 1, PGID: 100, TPGID: -1}, nil, NotForeground},
		{"no controlling terminal (BSD ps says 0)", proc{PID: 100, PPID: 1, PGID: 100, TPGID: 0}, nil, NotForeground},
		{"a grandchild in the group is not the shell's own child (its child is)", shell, []proc{{PID: 103, PPID: 999, PGID: 100, TPGID: 100}}, AtPrompt},
	} {
		if got := state(c.shell, c.kids); got != c.want {
			t.Errorf("%s: state = %v; want %v", c.why, got, c.want)
		}
	}
}

func TestParsePS(t *testing.T) {
	const table = `    1     0     1    -1
  100     1   100   100
  101   100   101   100
  102   100   100   100
  103   101   101   100
`
	shell, kids, err := parsePS([]byte(table), 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := (proc{PID: 100, PPID: 1, PGID: 100, TPGID: 100}); shell != want {
		t.Errorf("shell %+v; want %+v", shell, want)
	}
	if len(kids) != 2 || kids[0].PID != 101 || kids[1].PID != 102 {
		t.Errorf("children %+v; want 101 and 102 (103 is a grandchild)", kids)
	}

	for _, c := range []struct {
		why, out string
		want     string
	}{
		{"a ps that ignores the empty titles prints a header", "  PID  PPID  PGID TPGID\n  100     1   100   100\n", "want pid, ppid, pgid and tpgid"},
		{"a ps without tpgid leaves a column out", "  100     1   100\n", "want pid, ppid, pgid and tpgid"},
		{"a dash where a number belongs", "  100     1   100     -\n", "want pid, ppid, pgid and tpgid"},
		{"the process has exited", "    1     0     1    -1\n", "no such process"},
	} {
		_, _, err := parsePS([]byte(c.out), 100)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one containing %q", c.why, err, c.want)
		}
	}
}

// Where ps cannot answer either, the answer is an error naming ps and what
// it said, never "at the prompt".
func TestShellAtPromptWithoutAnswer(t *testing.T) {
	t.Cleanup(ForcePS())
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'ps: keyword tpgid unknown' >&2\nexit 1\n"
	tmuxtest.WriteExecutable(t, filepath.Join(dir, "ps"), script)
	t.Setenv("PATH", dir)
	ok, err := ShellAtPrompt(os.Getpid())
	if ok || err == nil || !strings.Contains(err.Error(), "keyword tpgid unknown") || !strings.Contains(err.Error(), "ps ax -o") {
		t.Errorf("ShellAtPrompt with a failing ps: %v, %v; want false and an error naming the ps command and carrying its message", ok, err)
	}

	t.Setenv("PATH", t.TempDir()) // no ps at all
	ok, err = ShellAtPrompt(os.Getpid())
	if ok || err == nil || !strings.Contains(err.Error(), `"ps"`) {
		t.Errorf("ShellAtPrompt without ps: %v, %v; want false and an error naming ps", ok, err)
	}
	if errors.Is(err, errNoProcess) {
		t.Errorf("without ps the process is not known to be gone: %v", err)
	}
}

func TestParseGroupNames(t *testing.T) {
	out := "  10    10 bash\n  11    10 less\n  12    12 other\n  13    10 my prog\n"
	got := strings.Join(parseGroupNames(out, 10), ",")
	if got != "bash,less,my prog" {
		t.Errorf("names of group 10: %q; want the leader first, then less and my prog", got)
	}
}
