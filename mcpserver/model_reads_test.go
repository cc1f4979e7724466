package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolErr calls a tool that must answer a tool error and returns its text.
func toolErr(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v; want a tool error", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v) answered without an error", name, args)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text
}

// TestArgumentMistakesOneStyle: every argument mistake, whether a direct
// call or a batch row made it, answers in the tool's own words: what is
// wrong, then its arguments (the required ones named). None reaches tmux:
// this server has none.
func TestArgumentMistakesOneStyle(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs := connectServer(t, ctx, New(ctx, Deps{Selection: Selection{Toolsets: Toolsets, Tools: ToolNames()}}))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"run_shell_command", map[string]any{}, "run_shell_command needs command and paneId; its arguments are command, force, paneId, timeoutMs (required: command, paneId)"},
		{"send_keys", map[string]any{}, "send_keys needs paneId; its arguments are"},
		{"get_pane_info", map[string]any{"paneId": nil}, "get_pane_info needs paneId; its arguments are paneId (required: paneId)"},
		{"get_pane_info", map[string]any{"paneId": 3}, "get_pane_info: paneId must be a string, not number; its arguments are paneId (required: paneId)"},
		{"capture_pane", map[string]any{"paneId": "%1", "start": "top"}, "capture_pane: start must be an integer, not string; its arguments are"},
		{"list_panes", map[string]any{"windowID": "@1"}, `list_panes has no argument "windowID"; its arguments are sessionId, windowId`},
		{"list_sessions", map[string]any{"all": true}, `list_sessions takes no arguments; remove "all"`},
	} {
		direct := toolErr(t, cs, tc.tool, tc.args)
		if !strings.HasPrefix(direct, tc.want) {
			t.Errorf("%s(%v) directly: %q; want it to start %q", tc.tool, tc.args, direct, tc.want)
		}
		if tc.tool == "run_shell_command" || tc.tool == "send_keys" {
			continue // not an inspect tool: a batch refuses it whole
		}
		var got batchResult
		call(t, cs, batchName, map[string]any{"operations": []any{map[string]any{"tool": tc.tool, "arguments": tc.args}}}, &got)
		if len(got.Results) != 1 || got.Results[0].Error != direct {
			t.Errorf("%s(%v) in a batch: %+v; want the direct call's %q", tc.tool, tc.args, got.Results, direct)
		}
	}
	if msg := toolErr(t, cs, "list_panes", []any{1}); msg == "" {
		t.Error("an array of arguments answered nothing")
	}
}

// TestHiddenToolSaysWhatTurnsItOn: a tool of this build that this process
// did not enable stays unlisted, and a call to it answers what turns it on;
// a name that is no tool at all is still a protocol error.
func TestHiddenToolSaysWhatTurnsItOn(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sel, err := Select(tmux.Provenance{State: tmux.StateExisting, Config: tmux.ConfigOther}, nil, nil, []string{"capture_pane"})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectServer(t, ctx, New(ctx, Deps{Selection: sel}))
	names := listedNames(t, cs)
	for _, tc := range []struct{ tool, want string }{
		{"kill_session", "kill_session is not enabled on this server: it is in the teardown toolset, which this server was not started with (toolsets: execute, inspect, manage); whoever runs the server can restart it with --toolsets execute,inspect,manage,teardown (or LIBTMUX_TOOLSETS=execute,inspect,manage,teardown), or add just this tool with --enable-tool kill_session (LIBTMUX_TOOLS)"},
		{"capture_pane", "capture_pane is switched off on this server: it was excluded with --exclude-tool (LIBTMUX_EXCLUDE_TOOLS)"},
		{"tmux_run", "tmux_run is not enabled on this server: it is opt-in, and whoever runs the server turns it on by restarting it with --enable-tool tmux_run; then a person lends a zsh pane by typing eval \"$(libtmux-mcp enroll)\" in it"},
	} {
		for _, n := range names {
			if n == tc.tool {
				t.Errorf("%s is listed; a hidden tool must not be", tc.tool)
			}
		}
		if got := toolErr(t, cs, tc.tool, map[string]any{"sessionId": "$1"}); !strings.HasPrefix(got, tc.want) {
			t.Errorf("call of hidden %s: %q; want %q", tc.tool, got, tc.want)
		}
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("no_such_tool: %v; want go-sdk's unknown tool protocol error", err)
	}
	raw, _ := json.Marshal(names)
	t.Logf("listed: %s", raw)
}

// fakeEnrollments invites the panes in invited; states overrides Lookup.
type fakeEnrollments struct {
	invited map[string]bool
	states  map[string]string
}

func (f fakeEnrollments) Lookup(pane string) (*enroll.Enrollment, string) {
	if st, ok := f.states[pane]; ok {
		return nil, st
	}
	return nil, enroll.StateNone
}

func (f fakeEnrollments) Invites(pane string) bool { return f.invited[pane] }

func (f fakeEnrollments) InputBegins(...string) func() { return func() {} }

// refusingRunner answers every run as the broker answers one for a pane
// with no enrollment (or with a lost one, for lost).
type refusingRunner struct{ lost bool }

func (r refusingRunner) Run(_ context.Context, req broker.Request) broker.Outcome {
	if r.lost {
		return broker.Outcome{Code: broker.CodeEnrollmentLost, Message: "the enrolled shell of pane " + req.Pane + " went away", Delivery: broker.NotSent, Recovery: broker.RecoveryReinvite}
	}
	return broker.Outcome{Code: broker.CodeNotEnrolled, Message: "pane " + req.Pane + " is not enrolled", Delivery: broker.NotSent, Recovery: broker.RecoveryEnroll}
}

func (r refusingRunner) Start(ctx context.Context, req broker.Request) (broker.Outcome, string) {
	return r.Run(ctx, req), ""
}

func (refusingRunner) WaitBackground(context.Context, string, [2]int64, int) (broker.BackgroundView, error) {
	return broker.BackgroundView{}, errors.New("no background runs")
}

func (refusingRunner) CancelBackground(context.Context, string, [2]int64, int) (broker.BackgroundView, error) {
	return broker.BackgroundView{}, errors.New("no background runs")
}

func (refusingRunner) Backgrounds() []broker.BackgroundView { return nil }

// TestTmuxRunRefusalNamesTheStepThatHelps: not_enrolled says, for each
// case, what actually helps: a pane never enrolled needs a person to type
// libtmux-mcp enroll there, a pane that does not exist needs list_panes, an
// expired invitation needs the command again (or SIGHUP for an
// --enroll-pane), a live one needs a person to source it; a lost
// enrollment names the command and SIGHUP too.
func TestTmuxRunRefusalNamesTheStepThatHelps(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.Start(t)
	invited := shPane(t, ts, "invited")
	expired := shPane(t, ts, "expired")
	stranger := shPane(t, ts, "stranger")
	sel, err := Select(tmux.Provenance{}, []string{}, []string{"tmux_run"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	enr := fakeEnrollments{invited: map[string]bool{invited: true, expired: true}, states: map[string]string{invited: enroll.StateInvited}}
	for _, tc := range []struct {
		pane string
		lost bool
		want []string
	}{
		{stranger, false, []string{"pane " + stranger + " was never enrolled", `eval "$(libtmux-mcp enroll)"`, "list_panes"}},
		{"%999", false, []string{"there is no pane %999 on this server; call list_panes"}},
		{expired, false, []string{"the invitation for pane " + expired + " expired unused", "libtmux-mcp enroll", "SIGHUP (kill -HUP "}},
		{invited, false, []string{"pane " + invited + " is invited but not enrolled yet", "source"}},
		{expired, true, []string{"went away", "libtmux-mcp enroll", "SIGHUP"}},
	} {
		cs := connect(t, ts, Deps{Selection: sel, Enrollments: enr, Runner: refusingRunner{lost: tc.lost}})
		e, raw := tmuxRunRefusal(t, cs, map[string]any{
			"target": map[string]any{"kind": "pane", "id": tc.pane, "generation": "g"}, "script": "true"})
		if e.Delivery != "not_sent" {
			t.Errorf("%s: %s; want a not_sent error", tc.pane, raw)
		}
		for _, w := range tc.want {
			if !strings.Contains(e.Message, w) {
				t.Errorf("%s (lost %v): message %q; want it to say %q", tc.pane, tc.lost, e.Message, w)
			}
		}
	}
}

// tmuxRunError is the error object of a tmux_run answer.
type tmuxRunError struct{ Code, Message, Delivery string }

// tmuxRunRefusal calls tmux_run with args, which must be refused, and
// returns the answer's error and the whole answer as JSON.
func tmuxRunRefusal(t *testing.T, cs *mcp.ClientSession, args map[string]any) (tmuxRunError, []byte) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tmux_run", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var answer struct {
		Error tmuxRunError `json:"error"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || !res.IsError {
		t.Fatalf("tmux_run %v answered %s; want a refusal", args, raw)
	}
	return answer.Error, raw
}
