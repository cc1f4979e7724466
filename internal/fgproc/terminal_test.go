package fgproc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

// Issue 32: a zsh or bash running the read builtin owns its terminal's
// foreground with no child there, as at its prompt; only the terminal's
// modes tell them apart. Real panes on a private tmux server: at the
// prompt LookAt says AtPrompt; in read (a line, a line without echo, one
// key) it says ReadingInput while Look, from process facts alone, still
// says AtPrompt; once read has its answer the shell is AtPrompt again.
func TestLookAtReadingShell(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	tmuxtest.Need(t, "bash", "zsh")
	newShell := map[string]func(name string) string{
		"zsh": ts.ZshSession,
		"bash": func(name string) string {
			pane := ts.NewSession(name, "env", "PS1=$ ", "HISTFILE=/dev/null", "bash", "--norc", "--noprofile", "-i")
			ts.WaitFor(pane, func(screen string) bool { return strings.HasPrefix(strings.TrimSpace(screen), "$") })
			return pane
		},
	}
	for _, c := range []struct {
		shell, read, answer string
		enter               bool
	}{
		{"zsh", "read x", "a line", true},
		{"zsh", "read -s x", "a secret", true},
		{"zsh", "read -k x", "k", false},
		{"bash", "read -r x", "a line", true},
		{"bash", "read -rs x", "a secret", true},
		{"bash", "read -rn1 x", "k", false},
	} {
		name := c.shell + ": " + c.read
		pane := newShell[c.shell](strings.NewReplacer(" ", "", "-", "").Replace(c.shell + c.read))
		pid, tty := paneFacts(t, ts, pane)
		tmuxtest.Eventually(t, 15*time.Second, name+": the idle shell at its prompt", func() bool {
			st, err := LookAt(pid, tty)
			return err == nil && st == AtPrompt
		})

		// The marker is printed by the command line that then reads: the
		// line editor has given the terminal back to the kernel by then.
		ts.Type(pane, `echo READ''ING; `+c.read+`; echo "GOT<$x>"`, true)
		ts.WaitFor(pane, func(screen string) bool { return lineShown(screen, "READING") })
		if st, err := LookAt(pid, tty); err != nil || st != ReadingInput {
			t.Errorf("%s: LookAt = %v, %v; want ReadingInput (%d)", name, st, err, ReadingInput)
		}
		if st, err := Look(pid); err != nil || st != AtPrompt {
			t.Errorf("%s: Look = %v, %v; want AtPrompt: the process facts alone cannot see read", name, st, err)
		}

		ts.Type(pane, c.answer, c.enter)
		ts.WaitFor(pane, func(screen string) bool { return strings.Contains(screen, "GOT<"+c.answer+">") })
		tmuxtest.Eventually(t, 15*time.Second, name+": the shell back at its prompt after read", func() bool {
			st, err := LookAt(pid, tty)
			return err == nil && st == AtPrompt
		})
	}
}

// Modes that cannot be read are an error and never AtPrompt: no terminal
// path, a path that is no terminal, a path that does not exist.
func TestLookAtWithoutModes(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.ZshSession("z")
	pid, tty := paneFacts(t, ts, pane)
	tmuxtest.Eventually(t, 15*time.Second, "zsh at its prompt", func() bool {
		st, err := LookAt(pid, tty)
		return err == nil && st == AtPrompt
	})
	file := filepath.Join(t.TempDir(), "not-a-terminal")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", file, os.DevNull, filepath.Join(t.TempDir(), "missing")} {
		st, err := LookAt(pid, bad)
		if !errors.Is(err, ErrModes) || st == AtPrompt {
			t.Errorf("LookAt(%d, %q) = %v, %v; want an error about the terminal's modes, never AtPrompt", pid, bad, st, err)
		}
	}
}

// paneFacts reads a pane's shell pid and terminal from tmux.
func paneFacts(t *testing.T, ts *tmuxtest.Server, pane string) (pid int, tty string) {
	t.Helper()
	out := strings.Fields(ts.Run("display-message", "-p", "-t", pane, "#{pane_pid} #{pane_tty}"))
	if len(out) != 2 {
		t.Fatalf("pane_pid and pane_tty of %s: %q", pane, out)
	}
	pid, err := strconv.Atoi(out[0])
	if err != nil {
		t.Fatalf("pane_pid of %s: %v", pane, err)
	}
	return pid, out[1]
}

// lineShown reports whether the screen has a line that is exactly line.
func lineShown(screen, line string) bool {
	for _, l := range strings.Split(screen, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// The cost of the modes: LookAt on an idle zsh is Look plus one open,
// one ioctl and one close of its terminal.
//
//	go test -run '^$' -bench 'Look' -benchtime 2000x ./internal/fgproc
func BenchmarkLook(b *testing.B) {
	ts := tmuxtest.Start(b)
	pane := ts.ZshSession("z")
	out := strings.Fields(ts.Run("display-message", "-p", "-t", pane, "#{pane_pid} #{pane_tty}"))
	pid, err := strconv.Atoi(out[0])
	if err != nil {
		b.Fatal(err)
	}
	tty := out[1]
	tmuxtest.Eventually(b, 15*time.Second, "zsh at its prompt", func() bool {
		st, err := LookAt(pid, tty)
		return err == nil && st == AtPrompt
	})
	b.Run("Look", func(b *testing.B) {
		for b.Loop() {
			if st, err := Look(pid); err != nil || st != AtPrompt {
				b.Fatalf("Look = %v, %v", st, err)
			}
		}
	})
	b.Run("LookAt", func(b *testing.B) {
		for b.Loop() {
			if st, err := LookAt(pid, tty); err != nil || st != AtPrompt {
				b.Fatalf("LookAt = %v, %v", st, err)
			}
		}
	})
	b.Run("modes", func(b *testing.B) {
		for b.Loop() {
			if _, err := readModes(tty); err != nil {
				b.Fatal(err)
			}
		}
	})
}
