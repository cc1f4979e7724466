package shellrun

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

func TestFrameNeverContainsItsMarkers(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "sh"} {
		f, err := newFrame("/usr/bin/tmux", "/tmp/s", "%1", "echo hi", shell)
		if err != nil {
			t.Fatal(err)
		}
		// The typed line (and so any wrapping of its echo) never holds a
		// marker: only the printed lines can equal one.
		if strings.Contains(f.line, f.begin) || strings.Contains(f.line, f.end) {
			t.Errorf("%s: the typed line %q contains a marker (%q, %q)", shell, f.line, f.begin, f.end)
		}
		if !strings.HasPrefix(f.line, " ") {
			t.Errorf("%s: the typed line does not start with a space (kept out of histories)", shell)
		}
		g, err := newFrame("/usr/bin/tmux", "/tmp/s", "%1", "echo hi", shell)
		if err != nil {
			t.Fatal(err)
		}
		if g.begin == f.begin || g.channel == f.channel {
			t.Errorf("two frames share a nonce: %q", f.begin)
		}
	}
	for _, bad := range []string{"/tmp/it's", "/tmp/$HOME", "/tmp/a\"b", "/tmp/a\\b", "/tmp/`x`"} {
		if _, err := newFrame("/usr/bin/tmux", bad, "%1", "true", "bash"); err == nil {
			t.Errorf("socket %q: accepted; want a refusal", bad)
		}
	}
}

func TestQuoteCommand(t *testing.T) {
	for _, c := range []struct {
		in, shell, want string
		err             bool
	}{
		{"echo hi", "bash", `'echo hi'`, false},
		{"echo 'a'", "zsh", `'echo '\''a'\'''`, false},
		{"a\tb", "bash", `$'a\011b'`, false},
		{"a\nb 'c' \\", "zsh", `$'a\012b \'c\' \\'`, false},
		{"a\nb", "dash", "", true},
	} {
		got, err := quoteCommand(c.in, c.shell)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("quoteCommand(%q, %s) = %q, %v; want %q (error %v)", c.in, c.shell, got, err, c.want, c.err)
		}
	}
}

func TestFrameParse(t *testing.T) {
	f := frame{begin: "ltX-s", end: "ltX-e:"}
	for _, c := range []struct {
		why        string
		lines      []string
		out        string
		status     int
		begin, end bool
	}{
		{"plain", []string{"% ( trap … ltX -s …", "ltX-s", "a", "b", "", "ltX-e:0", "% "}, "[a b]", 0, true, true},
		{"output without a final newline", []string{"ltX-s", "abc", "ltX-e:2"}, "[abc]", 2, true, true},
		{"an empty last line is kept", []string{"ltX-s", "a", "", "", "ltX-e:0"}, "[a ]", 0, true, true},
		{"markers printed by the command", []string{"ltX-s", "ltX-s", "ltX-e:9", "", "ltX-e:1", "% "}, "[ltX-s ltX-e:9]", 1, true, true},
		{"a prompt drawn after the echo (dash)", []string{" ( trap … ltX -s …", "$ ltX-s", "a", "", "ltX-e:0"}, "[a]", 0, true, true},
		{"still running", []string{"ltX-s", "working", "", ""}, "[working]", 0, true, false},
		{"start lost", []string{"tail", "", "ltX-e:0"}, "[tail]", 0, false, true},
		{"a status that is not a number", []string{"ltX-s", "ltX-e:x"}, "[ltX-e:x]", 0, true, false},
	} {
		out, status, begin, end := f.parse(c.lines)
		if fmt.Sprint(out) != c.out || status != c.status || begin != c.begin || end != c.end {
			t.Errorf("%s: got %q %d begin:%v end:%v; want %s %d begin:%v end:%v", c.why, out, status, begin, end, c.out, c.status, c.begin, c.end)
		}
	}
}

// The stream frame, run by each shell it is made for, prints the begin
// marker, the command's output and the status line, whichever way it runs
// the command (one fork, or eval in a subshell); the shell's own options
// and variables stay as they were. The typed line never holds a marker.
func TestStreamFrameRunsInItsShell(t *testing.T) {
	commands := []struct {
		command string
		output  []string
		status  int
	}{
		{"echo hi; exit 3", []string{"hi"}, 3},
		{"true # a comment", nil, 0},
		{"seq 1 3 | tail -n 1", []string{"3"}, 0},
		{"echo 'it''s' \"$((2+2))\"", []string{"its 4"}, 0},
		{"cd / && export X=1; echo $X", []string{"1"}, 0},
		{"printf 'no newline'", []string{"no newline"}, 0},
		{"f() { return 7; }; f", nil, 7},
		{"cat <<E\nheredoc\nE", []string{"heredoc"}, 0}, // not one fork: eval in the subshell
	}
	for _, shell := range []string{"zsh", "bash", "sh", "dash"} {
		if _, err := exec.LookPath(shell); err != nil {
			if shell == "zsh" || shell == "bash" {
				tmuxtest.Need(t, shell)
			}
			continue
		}
		for _, c := range commands {
			if strings.Contains(c.command, "\n") && (shell == "sh" || shell == "dash") {
				continue // refused for these shells (TestQuoteCommand)
			}
			f, err := newStreamFrame(c.command, shell)
			if err != nil {
				t.Fatalf("%s %q: %v", shell, c.command, err)
			}
			if strings.Contains(f.line, f.begin) || strings.Contains(f.line, f.end) {
				t.Errorf("%s: the typed line %q contains a marker", shell, f.line)
			}
			// The shell's state after the frame: options, the directory and
			// variables are its own.
			after := `; echo "after:$PWD:${X-unset}"`
			if shell == "zsh" {
				after = `; [[ -o hashdirs ]] && echo hashdirs-on` + after
			}
			before := "cd /tmp &&"
			if shell == "zsh" {
				before = "setopt hashdirs; " + before // as interactive zsh has it
			}
			cmd := exec.Command(shell, "-c", before+f.line+after)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s %q: %v\n%s", shell, c.command, err, out)
			}
			got, status, sawBegin, sawEnd := f.parse(strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"))
			if !sawBegin || !sawEnd || status != c.status || strings.Join(got, "|") != strings.Join(c.output, "|") {
				t.Errorf("%s %q: output %q, status %d (begin %v, end %v); want %q, %d\nprinted:\n%s", shell, c.command, got, status, sawBegin, sawEnd, c.output, c.status, out)
			}
			want := "after:/tmp:unset"
			if shell == "zsh" {
				want = "hashdirs-on\n" + want
			}
			if !strings.HasSuffix(string(out), want+"\n") {
				t.Errorf("%s %q: the shell's own state changed; it printed:\n%s\nwant it to end with %q", shell, c.command, out, want)
			}
		}
	}
}
