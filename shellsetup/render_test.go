package shellsetup

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// zshPath finds zsh, or skips (fails when LIBTMUX_MCP_REQUIRE_INTEGRATION=1).
func zshPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("zsh")
	if err != nil {
		if os.Getenv("LIBTMUX_MCP_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("zsh is required: %v", err)
		}
		t.Skipf("zsh not installed: %v", err)
	}
	return p
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ why, in, want string }{
		{"a plain path is just wrapped", "/tmp/b.sock", `'/tmp/b.sock'`},
		{"spaces stay inside the quotes", "/tmp/a b/c", `'/tmp/a b/c'`},
		{"a single quote closes, escapes and reopens", "/tmp/it's", `'/tmp/it'\''s'`},
		{"a quote and spaces together", "/tmp/ss it's here/b.sock", `'/tmp/ss it'\''s here/b.sock'`},
		{"two quotes in a row are not rc_quotes' ''", "/tmp/a''b", `'/tmp/a'\'''\''b'`},
		{"a quote at each end", "'/x'", `''\''/x'\'''`},
		{"$, backquote and backslash are literal in single quotes", "/tmp/$HOME/`id`/\\n", "'/tmp/$HOME/`id`/\\n'"},
		{"double quotes and history ! are literal", `/tmp/"x"!!`, `'/tmp/"x"!!'`},
		{"glob and brace characters are literal", "/tmp/*?[a]{b,c}~", `'/tmp/*?[a]{b,c}~'`},
		{"a semicolon and a hash do not end the word", "/tmp/a;b #c", `'/tmp/a;b #c'`},
		{"UTF-8 passes through", "/tmp/é ü/ß", `'/tmp/é ü/ß'`},
		{"the empty string is an empty word", "", `''`},
	} {
		if got := quote(tc.in); got != tc.want {
			t.Errorf("%s: quote(%q) = %s; want %s", tc.why, tc.in, got, tc.want)
		}
	}
}

// TestQuoteInZsh proves with real zsh that print -r -- <quoted> gives the
// original back, with and without rc_quotes.
func TestQuoteInZsh(t *testing.T) {
	zsh := zshPath(t)
	for _, s := range []string{
		"/tmp/b.sock", "/tmp/a b/c", "/tmp/it's", "/tmp/ss it's here/b.sock", "/tmp/a''b", "'/x'",
		"/tmp/$HOME/`id`/\\n", `/tmp/"x"!!`, "/tmp/*?[a]{b,c}~", "/tmp/a;b #c", "/tmp/é ü/ß", "-n", "",
	} {
		for _, opts := range [][]string{{"-f"}, {"-f", "-o", "rcquotes"}} {
			args := append(opts, "-c", "print -r -- "+quote(s))
			out, err := exec.Command(zsh, args...).CombinedOutput()
			if err != nil || string(out) != s+"\n" {
				t.Errorf("zsh %q printed %q (%v); want %q", args, out, err, s+"\n")
			}
		}
	}
}

func TestShellWord(t *testing.T) {
	for _, tc := range []struct{ why, in, want string }{
		{"a plain path stays bare", "/tmp/enroll-%3.zsh", "/tmp/enroll-%3.zsh"},
		{"a space needs quotes", "/tmp/a b", `'/tmp/a b'`},
		{"a quote needs quotes", "/tmp/it's", `'/tmp/it'\''s'`},
		{"a dollar needs quotes", "/tmp/$x", `'/tmp/$x'`},
		{"non-ASCII is quoted to be safe", "/tmp/é", `'/tmp/é'`},
	} {
		if got := shellWord(tc.in); got != tc.want {
			t.Errorf("%s: shellWord(%q) = %s; want %s", tc.why, tc.in, got, tc.want)
		}
	}
}

var goodParams = Params{Socket: "/tmp/d/b.sock", Helper: "/usr/lib/libtmux-mcp-helper", Token: strings.Repeat("0a", 16), Pane: "%3"}

func TestRenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		why    string
		change func(*Params)
		msg    string
	}{
		{"relative socket", func(p *Params) { p.Socket = "b.sock" }, "not absolute"},
		{"empty helper", func(p *Params) { p.Helper = "" }, "not absolute"},
		{"newline in the socket path would end a line", func(p *Params) { p.Socket = "/tmp/a\nb" }, "control character"},
		{"DEL in the helper path", func(p *Params) { p.Helper = "/tmp/a\x7fb" }, "control character"},
		{"ESC in the helper path could drive the terminal", func(p *Params) { p.Helper = "/tmp/\x1b[2J" }, "control character"},
		{"a C1 control character", func(p *Params) { p.Helper = "/tmp/\u009b2J" }, "control character"},
		{"invalid UTF-8", func(p *Params) { p.Helper = "/tmp/\xff" }, "UTF-8"},
		{"a socket path longer than sun_path", func(p *Params) { p.Socket = "/" + strings.Repeat("s", 107) }, "at most 107"},
		{"uppercase token", func(p *Params) { p.Token = strings.ToUpper(p.Token) }, "32 lowercase hex"},
		{"short token", func(p *Params) { p.Token = p.Token[1:] }, "32 lowercase hex"},
		{"token with a quote", func(p *Params) { p.Token = "'" + p.Token[1:] }, "32 lowercase hex"},
		{"pane without %", func(p *Params) { p.Pane = "3" }, "not a pane id"},
		{"pane with a suffix", func(p *Params) { p.Pane = "%3; rm" }, "not a pane id"},
		{"window id instead of a pane", func(p *Params) { p.Pane = "@3" }, "not a pane id"},
	} {
		p := goodParams
		tc.change(&p)
		out, err := Render(p)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || out != nil {
			t.Errorf("%s: Render = %d bytes, %v; want an error containing %q", tc.why, len(out), err, tc.msg)
		}
	}
	if _, err := Render(Params{Socket: "/" + strings.Repeat("s", 106), Helper: "/h", Token: goodParams.Token, Pane: "%0"}); err != nil {
		t.Errorf("a 107-byte socket path: %v", err)
	}
}

func TestRenderSubstitutes(t *testing.T) {
	for _, ph := range []string{placeSocket, placeHelper, placeToken, placePane} {
		if !strings.Contains(template, ph) {
			t.Errorf("setup.zsh has no %s", ph)
		}
	}
	if n := strings.Count(template, placeToken); n != 1 {
		t.Errorf("setup.zsh holds the token %d times; want once", n)
	}
	p := Params{Socket: "/tmp/s it's/b.sock", Helper: "/opt/@HELPER@/h", Token: goodParams.Token, Pane: "%12"}
	out, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"zsocket -d $_libtmux_mcp_c '/tmp/s it'\\''s/b.sock' ||",
		"( '/opt/@HELPER@/h' serve 3<&$nfd",
		"HELLO 1 " + p.Token + " $$ $TMUX_PANE $TMUX",
		"'tmux_run enrolled in pane %12; run libtmux_mcp_unenroll to stop'",
		"'tmux_run unenrolled in pane %12'",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("rendered file lacks %q", want)
		}
	}
	// Replacement is one pass: a placeholder inside a value stays as written.
	for _, ph := range []string{placeSocket, placeToken, placePane} {
		if strings.Contains(s, ph) {
			t.Errorf("rendered file still holds %s", ph)
		}
	}
	if strings.Count(s, "@HELPER@") != 1 {
		t.Errorf("the helper path's own @HELPER@ was expanded")
	}
}

// TestRenderedFileParses runs zsh's own syntax check (zsh -n) on rendered
// files, with awkward paths.
func TestRenderedFileParses(t *testing.T) {
	zsh := zshPath(t)
	dir := t.TempDir()
	for i, p := range []Params{
		goodParams,
		{Socket: "/tmp/ss it's/b.sock", Helper: "/a b/it's \"here\"/$h`x`", Token: goodParams.Token, Pane: "%0"},
		{Socket: "/tmp/é/;#{}", Helper: "/h'", Token: goodParams.Token, Pane: "%4294967295"},
	} {
		out, err := Render(p)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "setup"+string(rune('0'+i))+".zsh")
		if err := os.WriteFile(f, out, 0o600); err != nil {
			t.Fatal(err)
		}
		if msg, err := exec.Command(zsh, "-n", f).CombinedOutput(); err != nil || len(msg) > 0 {
			t.Errorf("zsh -n on the file for %+v: %v\n%s", p, err, msg)
		}
	}
}

// TestNonInteractiveShellRefuses sources the file in zsh -c: it must refuse,
// return 1, print only the refusal, never the token, and connect nowhere.
func TestNonInteractiveShellRefuses(t *testing.T) {
	zsh := zshPath(t)
	dir := t.TempDir()
	p := goodParams
	p.Socket = filepath.Join(dir, "nobody-listens")
	out, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "setup.zsh")
	os.WriteFile(f, out, 0o600)
	for _, tc := range []struct {
		why  string
		args []string
		env  []string
		msg  string
	}{
		{"zsh -c is not interactive", []string{"-f", "-c", `source "$1"; print "rc=$?"`, "zsh", f}, []string{"TMUX=/tmp/x,1,0", "TMUX_PANE=%3"}, "needs an interactive zsh"},
		{"with xtrace and verbose on", []string{"-f", "-o", "xtrace", "-o", "verbose", "-c", `source "$1"; print "rc=$?"`, "zsh", f}, []string{"TMUX=/tmp/x,1,0", "TMUX_PANE=%3"}, "needs an interactive zsh"},
		{"outside tmux", []string{"-f", "-i", "-c", `source "$1"; print "rc=$?"`, "zsh", f}, nil, "not inside tmux"},
	} {
		cmd := exec.Command(zsh, tc.args...)
		cmd.Env = append(filterEnv(os.Environ(), "TMUX", "TMUX_PANE"), tc.env...)
		cmd.Stdin = bytes.NewReader(nil)
		got, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(got), "rc=1") || !strings.Contains(string(got), tc.msg) {
			t.Errorf("%s: got %q (%v); want %q and rc=1", tc.why, got, err, tc.msg)
		}
		if strings.Contains(string(got), p.Token) {
			t.Errorf("%s: the token was printed: %q", tc.why, got)
		}
	}
}

// filterEnv drops the named variables from env.
func filterEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
