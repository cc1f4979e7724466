package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHugeStringsNeverReachTmux: 10 MB names are refused before tmux is
// asked anything, with a short error.
func TestHugeStringsNeverReachTmux(t *testing.T) {
	tmuxtest.NotPerRelease(t, "a refusal before any tmux command")
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("s", "sh")
	window := strings.TrimSpace(ts.Run("display", "-p", "-t", pane, "#{window_id}"))
	cs, c := serve(t, ts, Deps{})
	huge := strings.Repeat("x", 10<<20)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"create_session", map[string]any{"sessionName": huge}},
		{"rename_window", map[string]any{"windowId": window, "name": huge}},
		{"set_pane_title", map[string]any{"paneId": pane, "title": huge}},
	} {
		before := c.Calls()
		text := callErr(t, cs, tc.tool, tc.args, "")
		if !strings.Contains(text, "the most it takes is 256 bytes") || len(text) > 400 {
			t.Errorf("%s with a 10 MB string answered %d bytes: %.300q; want a short refusal naming the maximum", tc.tool, len(text), text)
		}
		if n := c.Calls() - before; n != 0 {
			t.Errorf("%s with a 10 MB string ran %d tmux commands; want none", tc.tool, n)
		}
	}
}

// TestErrorsQuoteLittle: an error that would quote a long argument quotes
// its first 200 bytes.
func TestErrorsQuoteLittle(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("s", "sh")
	cs := connect(t, ts, Deps{})
	pattern := "(" + strings.Repeat("a", 1000)
	text := callErr(t, cs, "search_panes", map[string]any{"pattern": pattern, "regex": true}, "")
	if text == "" || strings.Contains(text, strings.Repeat("a", 201)) || !strings.Contains(text, "(1001 bytes)") {
		t.Errorf("search_panes with a bad 1001-byte regexp answered %q; want at most 200 bytes of it quoted", text)
	}
}

// TestBlockingCap: with a cap of 2, two waits in flight make a third
// blocking call a tool error that says how many and what to do; once they
// answer, blocking calls work again.
func TestBlockingCap(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	ts.NewSession("s", "sh")
	cs := connect(t, ts, Deps{Limits: Limits{MaxBlocking: 2, WaitMax: 60 * time.Second}})
	answers := make(chan string, 2)
	for range 2 {
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_channel", Arguments: map[string]any{"channel": "cap"}})
			if err != nil {
				answers <- err.Error()
				return
			}
			answers <- mustText(res)
		}()
	}
	// Both are in flight once their tmux wait-for processes run.
	tmuxtest.Eventually(t, 60*time.Second, "the two waits' wait-for processes", func() bool { return tmuxtest.CountProcesses(t, ts.Socket, "wait-for", "cap") >= 2 })
	refusal := callErr(t, cs, "wait_for_channel", map[string]any{"channel": "other", "timeoutMs": 1}, "")
	if !strings.Contains(refusal, "2 blocking calls (waits and runs) are already in flight") || !strings.Contains(refusal, "LIBTMUX_MCP_MAX_BLOCKING") {
		t.Errorf("the third blocking call answered %q; want the cap's refusal", refusal)
	}
	// A call that does not block is not capped.
	call(t, cs, "list_panes", map[string]any{}, nil)
	call(t, cs, "signal_channel", map[string]any{"channel": "cap"}, nil)
	call(t, cs, "signal_channel", map[string]any{"channel": "cap"}, nil)
	for range 2 {
		if a := <-answers; !strings.Contains(a, "signalled") {
			t.Errorf("a wait answered %q; want signalled", a)
		}
	}
	var got waitForChannelResult
	call(t, cs, "signal_channel", map[string]any{"channel": "after"}, nil)
	call(t, cs, "wait_for_channel", map[string]any{"channel": "after"}, &got)
	if got.Outcome != "signalled" {
		t.Errorf("after the cap cleared: %+v", got)
	}
}

func mustText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestCaptureReadsOnlyWhatTheBudgetReturns: a 100,000-line range over a
// pane with 3,000 lines of history returns the newest 200 lines and asks
// tmux for a few hundred rows, not the range (the note counts the rows
// never read).
func TestCaptureReadsOnlyWhatTheBudgetReturns(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("long", "sh")
	ts.Type(pane, "clear; seq 1 3000; echo END", true)
	ts.WaitFor(pane, func(s string) bool { return strings.Contains(s, "\nEND") })
	cs := connect(t, ts, Deps{})
	var cap capturePaneResult
	call(t, cs, "capture_pane", map[string]any{"paneId": pane, "start": -100000}, &cap)
	if len(cap.Lines) != DefaultMaxResultLines || !slices.Contains(cap.Lines, "3000") {
		t.Fatalf("got %d lines ending %q; want the newest %d", len(cap.Lines), cap.Lines[max(0, len(cap.Lines)-3):], DefaultMaxResultLines)
	}
	var notRead int
	if _, err := fmt.Sscanf(cap.Note[strings.Index(cap.Note, "the oldest "):], "the oldest %d rows", &notRead); err != nil {
		t.Fatalf("note %q does not count the rows not read", cap.Note)
	}
	if notRead < 99000 {
		t.Errorf("%d rows of 100,000 were not read; want all but a few hundred", notRead)
	}
	if cap.DroppedLines < 100000-1000 {
		t.Errorf("droppedLines = %d; want the rows not read counted", cap.DroppedLines)
	}
}

// TestDescriptorExhaustionToolError: a call that cannot start tmux for want
// of descriptors answers a tool error naming the limit and the next step.
// It holds every descriptor the test process may open, so it must not call
// t.Parallel: a sequential test runs while the parallel ones wait, and a
// parallel test beside it failed with "too many open files" in CI.
func TestDescriptorExhaustionToolError(t *testing.T) {
	ts := tmuxtest.Start(t)
	ts.NewSession("s", "sh")
	cs := connect(t, ts, Deps{})
	call(t, cs, "list_panes", map[string]any{}, nil) // the server is up before descriptors run out
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var held []int
	release := func() {
		for _, fd := range held {
			syscall.Close(fd)
		}
		held = nil
	}
	defer release()
	for range lim.Cur {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		held = append(held, fd)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_panes", Arguments: map[string]any{}})
	release()
	if err != nil {
		t.Fatalf("list_panes: protocol error %v", err)
	}
	text := mustText(res)
	if !res.IsError || !strings.Contains(text, "open files") || !strings.Contains(text, "ulimit -n") {
		t.Errorf("list_panes without descriptors answered %q; want a tool error naming the limit and ulimit -n", text)
	}
}

// TestArgumentRefusalIsTheGuards: the refusal a transport answers before
// go-sdk decodes a call (ArgumentRefusal) is the call gate's answer to the same
// call, word for word, so a model reads the same text on every path; and a
// call the call gate lets through, or a tool outside the selection, passes.
func TestArgumentRefusalIsTheGuards(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	pane := ts.NewSession("s", "sh")
	sel, err := Select(tmux.Provenance{}, nil, []string{"tmux_run"}, []string{"kill_session"})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := serve(t, ts, Deps{Selection: sel})
	ops := strings.Repeat(`{"tool":"list_panes"},`, MaxListItems)
	for _, c := range []struct{ tool, args string }{
		{"call_read_tools_batch", `{"operations":[` + ops + `{"tool":"list_panes"}]}`},
		{"create_session", `{"sessionName":"` + strings.Repeat("n", 300) + `"}`},
		{"set_pane_title", `{"paneId":"` + pane + `","title":"` + strings.Repeat("t", 3000) + `"}`},
		{"capture_pane", `{"paneId":"%` + strings.Repeat("9", 999) + `"}`},
	} {
		want := sel.ArgumentRefusal(c.tool, json.RawMessage(c.args))
		if want == "" {
			t.Errorf("%s %.60s: ArgumentRefusal lets it through; want a refusal", c.tool, c.args)
			continue
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; !res.IsError || got != want {
			t.Errorf("%s: the call gate answered %q (isError %v); ArgumentRefusal says %q", c.tool, got, res.IsError, want)
		}
	}
	for _, c := range []struct{ why, tool, args string }{
		{"arguments within bounds", "capture_pane", `{"paneId":"` + pane + `"}`},
		{"a tool outside the selection", "kill_session", `{"x":"` + strings.Repeat("x", 5000) + `"}`},
		{"a raw tool, which checks its own", "tmux_run", `{"command":"` + strings.Repeat("x", 70000) + `"}`},
		{"a tool that does not exist", "no_such_tool", `{"x":"` + strings.Repeat("x", 5000) + `"}`},
	} {
		if got := sel.ArgumentRefusal(c.tool, json.RawMessage(c.args)); got != "" {
			t.Errorf("%s: ArgumentRefusal(%s) = %q; want it let through", c.why, c.tool, got)
		}
	}
}
