package mcpserver

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
)

func TestKeyInputArgs(t *testing.T) {
	t.Parallel()
	text := func(s string) string { return s }
	for _, tc := range []struct {
		why     string
		in      keyInput
		want    []string
		wantErr string
	}{
		{"text is typed literally after -l --", keyInput{PaneID: "%1", Text: text("C-c")}, []string{"-l", "--", "C-c"}, ""},
		{"text keeps a trailing ;", keyInput{PaneID: "%1", Text: text("a;")}, []string{"-l", "--", `a\;`}, ""},
		{"keys come after --", keyInput{PaneID: "%1", Keys: []string{"-", "Enter"}}, []string{"--", "-", "Enter"}, ""},
		{"enter alone presses Enter", keyInput{PaneID: "%1", Enter: true}, []string{"--"}, ""},
		{"both keys and text", keyInput{PaneID: "%1", Keys: []string{"q"}, Text: text("q")}, nil, "not both"},
		{"neither", keyInput{PaneID: "%1"}, nil, "nothing to send"},
		{"empty text", keyInput{PaneID: "%1", Text: text("")}, nil, "nothing to send"},
		{"a bad key", keyInput{PaneID: "%1", Keys: []string{"Enter", "ls -l"}}, nil, `"ls -l" is not a key name`},
		{"too many keys", keyInput{PaneID: "%1", Keys: slices.Repeat([]string{"a"}, maxKeys+1)}, nil, "at most"},
		{"escape in text", keyInput{PaneID: "%1", Text: text("a\x1b[A")}, nil, "control character"},
		{"NUL in text", keyInput{PaneID: "%1", Text: text("a\x00")}, nil, "control character"},
		{"text over the limit", keyInput{PaneID: "%1", Text: text(strings.Repeat("a", maxTextBytes+1))}, nil, "limit"},
		{"a malformed pane id", keyInput{PaneID: "1", Text: text("a")}, nil, "not a tmux pane id"},
	} {
		got, _, err := tc.in.args()
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: got %q, %v; want an error containing %q", tc.why, got, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%s: got %q, %v; want %q", tc.why, got, err, tc.want)
		}
	}
}

// catPane starts a session whose pane echoes what it receives with cat -v
// (control characters made visible), one line per Enter.
func catPane(ts *tmuxtest.Server, name string) string {
	pane := ts.NewSession(name, "cat", "-v")
	ts.WaitCommand(pane, "cat")
	return pane
}

func TestSendKeys(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.Run("set-option", "-g", "remain-on-exit", "on")
	pane := catPane(ts, "keys")
	cs := connect(t, ts, Deps{})

	var got sendKeysResult
	call(t, cs, "send_keys", map[string]any{"paneId": pane, "text": "C-c #{pane_id} Enter;", "enter": true}, &got)
	if got.PaneID != pane || !slices.Equal(got.Cohort, []string{pane}) {
		t.Errorf("send_keys answered %+v; want paneId %s and cohort [%s]", got, pane, pane)
	}
	// cat -v prints the line back once Enter arrives: text is never a key.
	ts.WaitFor(pane, func(s string) bool { return strings.Count(s, "C-c #{pane_id} Enter;\n") == 2 })

	call(t, cs, "send_keys", map[string]any{"paneId": pane, "keys": []string{"C-a", "M-x", ";", "q", "Enter"}}, &got)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "^A^[x;q\n") })

	call(t, cs, "send_keys", map[string]any{"paneId": pane, "keys": []string{"C-c"}}, &got)
	ts.WaitFor(pane, func(string) bool {
		return ts.Run("display", "-p", "-t", pane, "#{pane_dead}") == "1\n" // C-c ended cat
	})

	// Refusals name the fix; nothing is sent.
	plain := catPane(ts, "plain")
	modal := catPane(ts, "modal")
	ts.Run("copy-mode", "-t", modal)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"paneId": plain, "keys": []string{"echo hi"}}, "send words as text"},
		{map[string]any{"paneId": plain, "keys": []string{"q"}, "text": "q"}, "not both"},
		{map[string]any{"paneId": plain}, "nothing to send"},
		{map[string]any{"paneId": modal, "keys": []string{"q"}}, "copy-mode"},
		{map[string]any{"paneId": "%999", "text": "x"}, "call list_panes"},
		{map[string]any{"paneId": plain, "text": "x", "force": plain}, "not this MCP server's own pane"},
	} {
		callErr(t, cs, "send_keys", tc.args, tc.want)
	}
	if s := ts.Capture(plain); strings.TrimSpace(s) != "" {
		t.Errorf("a refused call typed into %s:\n%s", plain, s)
	}
}

func TestSendKeysReachesTheSynchronizedCohort(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	a := catPane(ts, "sync")
	b := strings.TrimSpace(ts.Run("split-window", "-P", "-F", "#{pane_id}", "-t", a, "cat", "-v"))
	ts.WaitCommand(b, "cat")
	ts.Run("set-option", "-w", "-t", a, "synchronize-panes", "on")
	cs := connect(t, ts, Deps{})
	var got sendKeysResult
	call(t, cs, "send_keys", map[string]any{"paneId": a, "text": "both", "enter": true}, &got)
	if want := sorted([]string{a, b}); !slices.Equal(got.Cohort, want) {
		t.Errorf("cohort %v; want %v", got.Cohort, want)
	}
	for _, p := range []string{a, b} {
		ts.WaitFor(p, func(s string) bool { return strings.Count(s, "both\n") == 2 })
	}
}

func TestSendKeysBatch(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	a := catPane(ts, "a")
	b := catPane(ts, "b")
	modal := catPane(ts, "modal")
	ts.Run("copy-mode", "-t", modal)
	cs := connect(t, ts, Deps{})

	var got sendKeysBatchResult
	call(t, cs, "send_keys_batch", map[string]any{"rows": []map[string]any{
		{"paneId": a, "text": "one"},
		{"paneId": b, "keys": []string{"C-a", "Enter"}},
		{"paneId": a, "text": "two;", "enter": true},
	}}, &got)
	if len(got.Rows) != 3 || got.Rows[1].PaneID != b || !slices.Equal(got.Rows[2].Cohort, []string{a}) {
		t.Errorf("send_keys_batch answered %+v", got)
	}
	ts.WaitFor(a, func(s string) bool { return strings.Contains(s, "onetwo;\nonetwo;\n") })
	ts.WaitFor(b, func(s string) bool { return strings.Contains(s, "^A\n") })

	// Every row is checked before the first is sent.
	if msg := callErr(t, cs, "send_keys_batch", map[string]any{"rows": []map[string]any{
		{"paneId": a, "text": "never", "enter": true},
		{"paneId": a, "keys": []string{"not a key"}},
	}}, "row 1"); !strings.Contains(msg, "nothing was sent") {
		t.Errorf("a bad row 1: error %q; want row 1 named and nothing sent", msg)
	}
	rows := make([]map[string]any, maxBatchRows+1)
	for i := range rows {
		rows[i] = map[string]any{"paneId": a, "text": "x"}
	}
	callErr(t, cs, "send_keys_batch", map[string]any{"rows": rows}, "at most")
	big := strings.Repeat("y", maxTextBytes)
	rows = rows[:0]
	for range maxBatchSize/maxTextBytes + 1 {
		rows = append(rows, map[string]any{"paneId": a, "text": big})
	}
	callErr(t, cs, "send_keys_batch", map[string]any{"rows": rows}, "nothing was sent")

	// The first refusal stops the batch and says what was sent.
	msg := callErr(t, cs, "send_keys_batch", map[string]any{"rows": []map[string]any{
		{"paneId": b, "text": "sent", "enter": true},
		{"paneId": modal, "keys": []string{"q"}},
		{"paneId": b, "text": "unsent", "enter": true},
	}}, "row 1")
	for _, want := range []string{"row 1", "copy-mode", "row 0 sent", "rows 1 to 2 not"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refused row 1: error %q; want it to contain %q", msg, want)
		}
	}
	ts.WaitFor(b, func(s string) bool { return strings.Contains(s, "sent\nsent\n") })
	if s := ts.Capture(a); strings.Contains(s, "never") {
		t.Errorf("a batch with a bad row typed into %s:\n%s", a, s)
	}
	// The sh behind "unsent" would have had time to echo it only if sent;
	// a fresh round trip through the pane proves the order.
	ts.Type(b, "after", true)
	screen := ts.WaitFor(b, func(s string) bool { return strings.Contains(s, "after\n") })
	if strings.Contains(screen, "unsent") {
		t.Errorf("row 2 was sent after row 1 was refused:\n%s", screen)
	}
}

func TestPasteText(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	out := filepath.Join(ts.Dir, "pasted")
	pane := ts.NewSession("paste", "sh", "-c", "exec cat > "+out)
	ts.WaitCommand(pane, "cat")
	a := catPane(ts, "sync")
	b := strings.TrimSpace(ts.Run("split-window", "-P", "-F", "#{pane_id}", "-t", a, "cat", "-v"))
	ts.WaitCommand(b, "cat")
	ts.Run("set-option", "-w", "-t", a, "synchronize-panes", "on")
	modal := catPane(ts, "modal")
	ts.Run("copy-mode", "-t", modal)
	cs := connect(t, ts, Deps{})
	buffers := func() string { return ts.Run("list-buffers", "-F", "#{buffer_name}") }

	// Longer than one tmux command line, with pieces that would end in ;
	// or in the middle of a character, and words that look like keys.
	var text strings.Builder
	for i := 0; text.Len() < 3*maxTextBytes; i++ {
		fmt.Fprintf(&text, "line %d: C-c Enter #{pane_id} ünï ✓;\n", i)
	}
	want := text.String() + "last;"
	var got pasteTextResult
	call(t, cs, "paste_text", map[string]any{"paneId": pane, "text": want, "enter": true}, &got)
	if got.PaneID != pane || got.Bytes != len(want) {
		t.Errorf("paste_text answered %+v; want paneId %s, bytes %d", got, pane, len(want))
	}
	tmuxtest.WaitFileHolds(t, out, want+"\n")
	if bs := buffers(); bs != "" {
		t.Errorf("buffers left after a paste: %q", bs)
	}

	// Target only, even in a synchronized window.
	call(t, cs, "paste_text", map[string]any{"paneId": a, "text": "only-a", "enter": true, "bracketed": true}, &got)
	ts.WaitFor(a, func(s string) bool { return strings.Count(s, "only-a\n") == 2 })
	ts.Type(b, "marker", true) // reaches both; once it shows in b, a paste to b would have too
	screen := ts.WaitFor(b, func(s string) bool { return strings.Contains(s, "marker\n") })
	if strings.Contains(screen, "only-a") {
		t.Errorf("a paste to %s reached %s:\n%s", a, b, screen)
	}

	// Refusals leave no buffer behind.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"paneId": modal, "text": "x"}, "copy-mode"},
		{map[string]any{"paneId": pane, "text": ""}, "nothing to paste"},
		{map[string]any{"paneId": pane, "text": "a\x1bb"}, "control character"},
		{map[string]any{"paneId": pane, "text": strings.Repeat("a", maxPasteBytes+1)}, "limit"},
		{map[string]any{"paneId": "%999", "text": "x"}, "call list_panes"},
	} {
		callErr(t, cs, "paste_text", tc.args, tc.want)
	}
	if bs := buffers(); bs != "" {
		t.Errorf("buffers left after refusals: %q", bs)
	}
}

// TestPasteTextChecksAgainBeforePasting makes the pane modal between the
// buffer load and the paste: the second check refuses and the buffer goes.
func TestPasteTextChecksAgainBeforePasting(t *testing.T) {
	ts := tmuxtest.Start(t)
	pane := catPane(ts, "p")
	s := newTestServer(t, ts, Deps{})
	testHookBeforePaste = func() { ts.Run("copy-mode", "-t", pane) }
	t.Cleanup(func() { testHookBeforePaste = nil })
	_, err := s.pasteText(context.Background(), nil, pasteTextParams{PaneID: pane, Text: "x"})
	if err == nil || !strings.Contains(err.Error(), "copy-mode") {
		t.Errorf("paste after the pane entered copy-mode: %v; want a refusal naming copy-mode", err)
	}
	if bs := ts.Run("list-buffers", "-F", "#{buffer_name}"); bs != "" {
		t.Errorf("buffer left after the refused paste: %q", bs)
	}
}
