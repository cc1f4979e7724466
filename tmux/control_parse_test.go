package tmux

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseControlLine(t *testing.T) {
	for _, tc := range []struct {
		why     string
		in      string
		want    controlLine
		wantErr bool
	}{
		{"our command's block opens", "%begin 1796248659 269 1", controlLine{kind: lineBegin, guard: "1796248659 269 1", mine: true}, false},
		{"the attach's block is not ours", "%begin 1796248659 264 0", controlLine{kind: lineBegin, guard: "1796248659 264 0"}, false},
		{"end keeps its guard for matching", "%end 1 2 1", controlLine{kind: lineEnd, guard: "1 2 1", mine: true}, false},
		{"error block end", "%error 1 2 1", controlLine{kind: lineError, guard: "1 2 1", mine: true}, false},
		{"a guard needs three numbers", "%begin 1 2", controlLine{kind: lineOther}, true},
		{"a guard's numbers are digits", "%end 1 x 1", controlLine{kind: lineOther}, true},
		{"a guard has single spaces only", "%end 1  2 1", controlLine{kind: lineOther}, true},
		{"plain text outside a block is ignored", "hello", controlLine{kind: lineOther}, false},
		{"a lone percent is not a notification", "%", controlLine{kind: lineOther}, false},
		{"output is unescaped", `%output %0 a\011b\001\015\012`,
			controlLine{kind: lineNotify, event: Event{Kind: EventOutput, Pane: "%0", Data: []byte("a\tb\x01\r\n")}}, false},
		{"output keeps spaces in the data", "%output %12  two  spaces ",
			controlLine{kind: lineNotify, event: Event{Kind: EventOutput, Pane: "%12", Data: []byte(" two  spaces ")}}, false},
		{"output with empty data", "%output %3 ",
			controlLine{kind: lineNotify, event: Event{Kind: EventOutput, Pane: "%3", Data: []byte{}}}, false},
		{"output without even the space", "%output %3",
			controlLine{kind: lineNotify, event: Event{Kind: EventOutput, Pane: "%3", Data: []byte{}}}, false},
		{"output with a bad pane passes through", "%output x data",
			controlLine{kind: lineNotify, event: Event{Kind: EventOutput, Value: "x data"}}, false},
		{"extended output", `%extended-output %4 120 : hi\012`,
			controlLine{kind: lineNotify, event: Event{Kind: EventExtendedOutput, Pane: "%4", Value: "120", Data: []byte("hi\n")}}, false},
		{"exit without a reason", "%exit", controlLine{kind: lineNotify, event: Event{Kind: EventExit}}, false},
		{"exit with a reason", "%exit server exited", controlLine{kind: lineNotify, event: Event{Kind: EventExit, Reason: "server exited"}}, false},
		{"window close", "%window-close @3", controlLine{kind: lineNotify, event: Event{Kind: EventWindowClose, Window: "@3"}}, false},
		{"unlinked window close", "%unlinked-window-close @1", controlLine{kind: lineNotify, event: Event{Kind: EventUnlinkedWindowClose, Window: "@1"}}, false},
		{"window add", "%window-add @1", controlLine{kind: lineNotify, event: Event{Kind: EventWindowAdd, Window: "@1"}}, false},
		{"layout change", "%layout-change @0 b25d,80x20,0,0,0 b25d,80x20,0,0,0 *",
			controlLine{kind: lineNotify, event: Event{Kind: EventLayoutChange, Window: "@0", Value: "b25d,80x20,0,0,0 b25d,80x20,0,0,0 *"}}, false},
		{"pane mode changed", "%pane-mode-changed %7", controlLine{kind: lineNotify, event: Event{Kind: EventPaneModeChanged, Pane: "%7"}}, false},
		{"session changed carries the name with its spaces", "%session-changed $2 my session",
			controlLine{kind: lineNotify, event: Event{Kind: EventSessionChanged, Session: "$2", Name: "my session"}}, false},
		{"sessions changed", "%sessions-changed", controlLine{kind: lineNotify, event: Event{Kind: EventSessionsChanged}}, false},
		{"pane subscription", "%subscription-changed n1 $0 @1 1 %1 : bash",
			controlLine{kind: lineNotify, event: Event{Kind: EventSubscriptionChanged, Name: "n1", Session: "$0", Window: "@1", Pane: "%1", Value: "bash"}}, false},
		{"session subscription keeps ' : ' in the value", "%subscription-changed s $0 - - - : a : b",
			controlLine{kind: lineNotify, event: Event{Kind: EventSubscriptionChanged, Name: "s", Session: "$0", Value: "a : b"}}, false},
		{"subscription with an empty value", "%subscription-changed s $0 @2 0 - : ",
			controlLine{kind: lineNotify, event: Event{Kind: EventSubscriptionChanged, Name: "s", Session: "$0", Window: "@2"}}, false},
		{"malformed subscription passes through", "%subscription-changed s $0",
			controlLine{kind: lineNotify, event: Event{Kind: EventSubscriptionChanged, Value: "s $0"}}, false},
		{"unknown notifications pass through", "%window-renamed @0 [tmux]",
			controlLine{kind: lineNotify, event: Event{Kind: "window-renamed", Value: "@0 [tmux]"}}, false},
		{"an unknown word alone", "%continue", controlLine{kind: lineNotify, event: Event{Kind: "continue"}}, false},
	} {
		got, err := parseControlLine([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: parseControlLine(%q) error %v; want error %v", tc.why, tc.in, err, tc.wantErr)
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(controlLine{})); diff != "" {
			t.Errorf("%s: parseControlLine(%q) (-want +got):\n%s", tc.why, tc.in, diff)
		}
	}
}

func TestUnescapeOutput(t *testing.T) {
	for _, tc := range []struct {
		why, in, want string
	}{
		{"plain text is kept", "abc", "abc"},
		{"tmux escapes the backslash as \\134", `a\134b`, `a\b`},
		{"a doubled backslash is one backslash", `a\\b`, `a\b`},
		{"control bytes", `\000\001\033\177`, "\x00\x01\x1b\x7f"},
		{"the highest byte", `\377`, "\xff"},
		{"over 0377 is not an escape", `\400`, `\400`},
		{"truncated escape at the end", `ab\01`, `ab\01`},
		{"one digit", `\0`, `\0`},
		{"a non-octal digit ends it", `\018x`, `\018x`},
		{"a trailing backslash is kept", `abc\`, `abc\`},
		{"a backslash before a letter is kept", `\n`, `\n`},
		{"escapes back to back", `\134\134\012`, "\\\\\n"},
		{"UTF-8 passes untouched", "héllo ✓", "héllo ✓"},
	} {
		if got := string(unescapeOutput([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: unescapeOutput(%q) = %q; want %q", tc.why, tc.in, got, tc.want)
		}
	}
}

func TestIsBlockEnd(t *testing.T) {
	for _, tc := range []struct {
		why         string
		line, guard string
		end, failed bool
	}{
		{"the matching end", "%end 5 6 1", "5 6 1", true, false},
		{"the matching error", "%error 5 6 1", "5 6 1", true, true},
		{"an %end printed by a command is output", "%end 1 2 1", "5 6 1", false, false},
		{"a prefix is not a match", "%end 5 6 10", "5 6 1", false, false},
		{"plain output", "hello", "5 6 1", false, false},
	} {
		end, failed := isBlockEnd([]byte(tc.line), tc.guard)
		if end != tc.end || failed != tc.failed {
			t.Errorf("%s: isBlockEnd(%q, %q) = %v, %v; want %v, %v", tc.why, tc.line, tc.guard, end, failed, tc.end, tc.failed)
		}
	}
}

func TestQuoteArg(t *testing.T) {
	for _, tc := range []struct {
		why, in, want string
		wantErr       bool
	}{
		{"a plain word stays bare", "display-message", "display-message", false},
		{"flags and ids with @ stay bare", "@2", "@2", false},
		{"the empty string is an empty quoted word", "", "''", false},
		{"spaces are quoted", "a b", "'a b'", false},
		{"% at a word's start would be a %if directive", "%3", "'%3'", false},
		{"$ would expand an environment variable", "$HOME", "'$HOME'", false},
		{"~ would expand to the home directory", "~/x", "'~/x'", false},
		{"# would start a comment", "#{pane_id}", "'#{pane_id}'", false},
		{"; would end the command", "a;b", "'a;b'", false},
		{"braces would open a block", "{x}", "'{x}'", false},
		{"double quotes are literal in single quotes", `say "hi"`, `'say "hi"'`, false},
		{"a backslash is literal in single quotes", `a\b`, `'a\b'`, false},
		{"a single quote goes outside the quotes", "it's", `'it'\''s'`, false},
		{"only a single quote", "'", `\'`, false},
		{"newline as an octal escape", "a\nb", `'a'\012'b'`, false},
		{"tab and escape too", "\t\x1b", `\011\033`, false},
		{"DEL too", "x\x7f", `'x'\177`, false},
		{"UTF-8 is kept", "héllo", "'héllo'", false},
		{"NUL cannot be carried", "a\x00b", "", true},
	} {
		got, err := quoteArg(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: quoteArg(%q) error %v; want error %v", tc.why, tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: quoteArg(%q) = %s; want %s", tc.why, tc.in, got, tc.want)
		}
	}
	if _, err := commandLine(nil); err == nil {
		t.Errorf("commandLine(nil) = nil error; want one")
	}
}

func FuzzParseControlLine(f *testing.F) {
	for _, s := range []string{
		"%begin 1 2 1", "%end 1 2 0", "%error 1 2 1", `%output %0 a\134\012\`, "%exit",
		"%subscription-changed n $0 @1 2 %3 : v", "%extended-output %1 5 : x", "%layout-change @1 x",
		"%session-changed $1 name", "%", "%%", "%output", "% x", `\`, "%subscription-changed  $0 - - - : ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := parseControlLine(line)
		if err != nil && l.kind != lineOther {
			t.Errorf("error %v with kind %v", err, l.kind)
		}
		if l.kind == lineNotify && l.event.Kind == "" && len(line) > 1 && line[1] != ' ' {
			t.Errorf("%q: notification without a kind", line)
		}
		isBlockEnd(line, "1 2 1")
		unescapeOutput(line)
		if q, err := quoteArg(string(line)); err == nil && q == "" {
			t.Errorf("quoteArg(%q) is empty", line)
		}
	})
}
