package tmux

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Version
		tooOld  bool
		wantErr bool
	}{
		{"tmux 3.3a", Version{3, 3, 'a', "3.3a"}, false, false},
		{"tmux 3.2a\n", Version{3, 2, 'a', "3.2a"}, false, false},     // the oldest supported
		{"tmux 3.2", Version{3, 2, 0, "3.2"}, true, false},            // 3.2 lacks what 3.2a fixed
		{"tmux 3.1c", Version{3, 1, 'c', "3.1c"}, true, false},        // too old
		{"tmux next-3.5", Version{3, 5, 0, "next-3.5"}, false, false}, // development builds name their target
		{"tmux 3.4-rc", Version{3, 4, 0, "3.4-rc"}, false, false},     // release candidates
		{"tmux master", Version{99, 0, 0, "master"}, false, false},    // built from git without a number
		{"tmux", Version{}, false, true},                              // nothing to read
	} {
		got, err := ParseVersion(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseVersion(%q) error %v; want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseVersion(%q) = %+v; want %+v", tc.in, got, tc.want)
		}
		if !tc.wantErr && got.Less(MinVersion) != tc.tooOld {
			t.Errorf("%q older than %s = %v; want %v", tc.in, MinVersion.Text, got.Less(MinVersion), tc.tooOld)
		}
	}
}

func TestUTF8Environ(t *testing.T) {
	for _, tc := range []struct {
		why  string
		in   []string
		want string // the locale variables left, joined
	}{
		{"nothing set gets C.UTF-8", []string{"PATH=/bin"}, "LC_CTYPE=C.UTF-8"},
		{"a UTF-8 LANG is kept", []string{"LANG=en_US.UTF-8"}, "LANG=en_US.UTF-8"},
		{"LC_ALL decides before LANG", []string{"LANG=en_US.UTF-8", "LC_ALL=C"}, "LANG=en_US.UTF-8 LC_CTYPE=C.UTF-8"},
		{"an empty LC_ALL does not count", []string{"LC_ALL=", "LC_CTYPE=de_DE.utf8"}, "LC_ALL= LC_CTYPE=de_DE.utf8"},
		{"a POSIX LC_CTYPE is replaced", []string{"LC_CTYPE=POSIX"}, "LC_CTYPE=C.UTF-8"},
	} {
		var got []string
		for _, kv := range utf8Environ(tc.in) {
			if strings.HasPrefix(kv, "L") {
				got = append(got, kv)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: got %q; want %q", tc.why, got, tc.want)
		}
	}
}

func TestRouteValidate(t *testing.T) {
	for _, tc := range []struct {
		why   string
		route Route
		ok    bool
	}{
		{"empty is the default socket", Route{}, true},
		{"absolute path", Route{SocketPath: "/tmp/x y/s"}, true},
		{"apostrophes and non-ASCII pass", Route{SocketName: "it's-ü"}, true},
		{"both selectors", Route{SocketPath: "/tmp/s", SocketName: "n"}, false},
		{"relative path", Route{SocketPath: "s"}, false},
		{"relative config", Route{Config: "tmux.conf"}, false},
		{"control character", Route{SocketName: "a\x01"}, false},
		{"DEL", Route{Bin: "/usr/bin/tmux\x7f"}, false},
		{"newline in a path", Route{SocketPath: "/tmp/a\nb"}, false},
	} {
		if err := tc.route.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v; want ok %v", tc.why, err, tc.ok)
		}
	}
}

func TestLiteral(t *testing.T) {
	// What tmux 3.3a stores for each output is in TestLiteralRoundTrip
	// (mcpserver), measured on a real server.
	for _, tc := range []struct{ in, want, why string }{
		{"plain", "plain", "nothing to expand"},
		{"#{pane_id}", "##{pane_id}", "## expands to #, so the braces stay text"},
		{"#(touch x)", "##(touch x)", "a command substitution stays text"},
		{"##", "####", "each # doubled"},
		{"x#", "x##", "a # at the end"},
		{"a # b #[fg]", "a ## b #[fg]", "tmux keeps a #…[ run verbatim (a style), so it is left alone"},
		{"##[fg]#{x}", "##[fg]##{x}", "a run before [ kept, a later # doubled"},
	} {
		if got := Literal(tc.in); got != tc.want {
			t.Errorf("Literal(%q) = %q; want %q (%s)", tc.in, got, tc.want, tc.why)
		}
	}
}

func TestArg(t *testing.T) {
	for _, tc := range []struct{ in, want, why string }{
		{"plain", "plain", "nothing to keep"},
		{"a;b", "a;b", "only a trailing ';' ends a command"},
		{"a;", `a\;`, "tmux would end the command at a trailing ';'"},
		{";", `\;`, "a lone ';' is a separator"},
		{`a\;`, `a\\;`, "tmux turns the last '\\' before ';' into ';', so one more keeps the caller's"},
		{"a ;", `a \;`, "spaces do not matter"},
		{"#{pane_id}", "#{pane_id}", "no format is involved"},
	} {
		if got := Arg(tc.in); got != tc.want {
			t.Errorf("Arg(%q) = %q; want %q (%s)", tc.in, got, tc.want, tc.why)
		}
	}
}

// testSeps are separators for made-up output.
var testSeps = Separators{Field: "<F>", Record: "<R>"}

const fieldSep, recordSep = "<F>", "<R>"

func TestParseRowsOnMadeUpFields(t *testing.T) {
	// Values tmux itself would rewrite (a tab, a colon) cannot reach a real
	// server's rows, so the parser is checked on made-up output.
	out := "$1" + fieldSep + "2" + fieldSep + "0" + fieldSep + "100" + fieldSep + "tab\there: colon. dot" + recordSep + "\n" +
		"$2" + fieldSep + "1" + fieldSep + "1" + fieldSep + "200" + fieldSep + "multi\nline" + recordSep + "\n"
	got, err := parseRows(out, sessionFields, testSeps)
	if err != nil {
		t.Fatal(err)
	}
	want := []Session{
		{ID: "$1", Windows: 2, Attached: 0, Created: 100, Name: "tab\there: colon. dot"},
		{ID: "$2", Windows: 1, Attached: 1, Created: 200, Name: "multi\nline"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		"$1" + fieldSep + "2" + recordSep, // short row
		"$1" + fieldSep + "x" + fieldSep + "0" + fieldSep + "1" + fieldSep + "n" + recordSep, // not a number
	} {
		if _, err := parseRows(bad, sessionFields, testSeps); err == nil {
			t.Errorf("parseRows(%q) accepted a broken row", bad)
		}
	}
}

func TestParseSnapshotKeepsKindsApart(t *testing.T) {
	out := "I" + fieldSep + "42" + fieldSep + "1000" + fieldSep + "1" + fieldSep + "3.3a" + fieldSep + "/tmp/s" + recordSep + "\n" +
		"S" + fieldSep + "$0" + fieldSep + "1" + fieldSep + "0" + fieldSep + "5" + fieldSep + "main" + recordSep + "\n" +
		"C" + fieldSep + "1" + fieldSep + "7" + fieldSep + "$0" + fieldSep + "@0" + fieldSep + "" + fieldSep + "client-1" + recordSep + "\n"
	snap, sessions, _, err := parseSnapshot(out, testSeps)
	if err != nil {
		t.Fatal(err)
	}
	if sessions != 1 || len(snap.Sessions) != 1 || len(snap.Clients) != 1 || !snap.Clients[0].ControlMode {
		t.Errorf("snapshot = %+v", snap)
	}
	if snap.Server.VersionText != "3.3a" {
		t.Errorf("version = %q; want 3.3a", snap.Server.VersionText)
	}
	if snap.Server.Generation != Generation(42, 1000, "/tmp/s") || len(snap.Server.Generation) != 32 {
		t.Errorf("generation = %q", snap.Server.Generation)
	}
	if Generation(42, 1001, "/tmp/s") == snap.Server.Generation {
		t.Error("a restarted server kept its generation")
	}
}

func FuzzParseSnapshot(f *testing.F) {
	f.Add("I<F>1<F>2<F>0<F>3.3a<F>/s<R>\nS<F>$0<F>1<F>0<F>5<F>x<R>")
	f.Add("P<F><R>")
	f.Fuzz(func(t *testing.T, out string) {
		parseSnapshot(out, testSeps) // must not panic
	})
}

func TestValidVariableName(t *testing.T) {
	for name, want := range map[string]bool{
		"pane_current_path":     true,
		"window_zoomed_flag":    true,
		"pid":                   true,
		"x2":                    true,
		"":                      false,
		"#{pid}":                false, // a format, not a name
		"#(touch f)":            false, // a shell command
		"E:status-left":         false, // a modifier
		"status-left":           false, // an option name: show_option reads those
		"Pane_id":               false, // variables are lower case
		"2x":                    false,
		"pane_id}#{pid":         false, // would close and reopen the braces
		strings.Repeat("a", 65): false,
	} {
		if got := ValidVariableName(name); got != want {
			t.Errorf("ValidVariableName(%q) = %v; want %v", name, got, want)
		}
	}
}

func TestOnOff(t *testing.T) {
	t.Parallel()
	for _, b := range []bool{true, false} {
		if got, err := ParseOnOff(OnOff(b) + "\n"); err != nil || got != b {
			t.Errorf("ParseOnOff(OnOff(%v)) = %v, %v; want %v", b, got, err, b)
		}
	}
	if _, err := ParseOnOff("1"); err == nil {
		t.Error(`ParseOnOff("1") = nil error; want a refusal: show-options -v prints on or off`)
	}
}

func TestSplitCaptureDropsBlankBottomRows(t *testing.T) {
	t.Parallel()
	got := SplitCapture("a\n\nb\n   \n\n")
	if strings.Join(got, "|") != "a||b" {
		t.Errorf("SplitCapture = %q; want a||b", got)
	}
}

func TestAttachedClientLabel(t *testing.T) {
	t.Parallel()
	if got := (AttachedClient{Name: "client-1", TTY: "/dev/pts/3"}).Label(); got != "/dev/pts/3" {
		t.Errorf("Label = %q; want the terminal", got)
	}
	if got := (AttachedClient{Name: "client-1"}).Label(); got != "client-1" {
		t.Errorf("Label = %q; want the name when there is no terminal", got)
	}
}
