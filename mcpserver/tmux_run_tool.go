package mcpserver

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/libtmux/libtmux-mcp/enroll"
	"github.com/libtmux/libtmux-mcp/internal/argcheck"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The published tmux_run contract's schemas, verbatim. Typed registration
// cannot compile the script pattern (Go's regexp has no \u escapes), so the
// tool is registered raw and validates its own arguments.
var (
	//go:embed tmux_run_input.json
	tmuxRunInputSchema json.RawMessage
	//go:embed tmux_run_output.json
	tmuxRunOutputSchema json.RawMessage
)

const tmuxRunDescription = "Runs a POSIX sh script in a pane whose zsh a person enrolled (list_panes enrollment: enrolled; prefer it there to run_shell_command), typing nothing into the terminal. " +
	"Answers the exact exit status or signal (ok:true either way), stdout and stderr apart. " +
	"The script gets the shell's directory and exported environment, stdin closed; cd and export do not persist. " +
	"A shell not idle at an empty prompt is refused at once, nothing queued. " +
	"Output past stdout_limit or stderr_limit (default 65536 bytes) stops the script; tmux_run_start keeps any size. " +
	"target.generation: list_panes' serverGeneration. " +
	`Example: {"target":{"kind":"pane","id":"%3","generation":"<serverGeneration>"},"script":"make test"}`

// tmuxRunArgs are tmux_run's arguments as the contract names them.
type tmuxRunArgs struct {
	Target struct {
		Kind       string `json:"kind"`
		ID         string `json:"id"`
		Generation string `json:"generation"`
	} `json:"target"`
	Script      *string `json:"script"`
	StdoutLimit *int    `json:"stdout_limit"`
	StderrLimit *int    `json:"stderr_limit"`
}

// Runner runs tmux_run and tmux_run_start requests; *broker.Broker is the one implementation.
type Runner interface {
	Run(ctx context.Context, req broker.Request) broker.Outcome
	Start(ctx context.Context, req broker.Request) (broker.Outcome, string)
	WaitBackground(ctx context.Context, handle string, from [2]int64, budget int) (broker.BackgroundView, error)
	CancelBackground(ctx context.Context, handle string, from [2]int64, budget int) (broker.BackgroundView, error)
	Backgrounds() []broker.BackgroundView
}

// enrolledShellRun is what tmux_run and tmux_run_start do: run an authored script in an
// enrolled shell's pane, with that shell's user, and read its output.
var enrolledShellRun = Capability{
	ProcessReach:        ReachEnrolledShell,
	Effects:             []Effect{EffectObserve, EffectChange, EffectDelete},
	Outputs:             []Output{OutputProcessOutput},
	InputLiteralization: map[string]Literalization{"script": litNotSent},
}

// enrolledShellAnnotations are tmux_run's and tmux_run_start's annotations, titled.
func enrolledShellAnnotations(title string) *mcp.ToolAnnotations {
	yes, no := true, false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: false, DestructiveHint: &yes, IdempotentHint: false, OpenWorldHint: &no}
}

func tmuxRunTool() tool {
	return &rawTool{toolSpec: toolSpec{
		name:         "tmux_run",
		blocks:       true,
		toolset:      OptIn,
		title:        "Run in an enrolled shell",
		description:  tmuxRunDescription,
		annotations:  enrolledShellAnnotations("Run in an enrolled shell"),
		capability:   enrolledShellRun,
		inputSchema:  tmuxRunInputSchema,
		outputSchema: tmuxRunOutputSchema,
	}, handle: (*server).tmuxRun}
}

func (s *server) tmuxRun(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	breq, out := s.parseTmuxRun(req.Params.Arguments)
	if breq != nil {
		if s.runner == nil {
			out = broker.Outcome{Code: broker.CodeBrokerUnavailable, Message: "the tmux_run broker is not running", Delivery: broker.NotSent}
		} else {
			if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
				breq.Progress = func(p broker.Progress) {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token,
						Progress:      float64(p.ElapsedMS),
						Message:       fmt.Sprintf("running for %d ms; stdout %d bytes, stderr %d bytes", p.ElapsedMS, p.StdoutBytes, p.StderrBytes),
					})
				}
			}
			out = s.runner.Run(ctx, *breq)
		}
		out.Message = s.runNextStep(ctx, breq.Pane, out)
	}
	answer := broker.NewAnswer(breq, out)
	text, err := encodeJSON(answer)
	if err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: answer,
		IsError:           out.Code != "",
	}
	if left := out.Survivors; left != nil {
		// The contract's object has no room for it: a second text block, and the result's _meta.
		res.Content = append(res.Content, &mcp.TextContent{Text: left.String()})
		res.Meta = mcp.Meta{survivorsMeta: map[string]any{"count": left.Count, "some": nonNil(left.Some)}}
	}
	return res, nil
}

// survivorsMeta names, in a tmux_run result's _meta, what the script left running in its group.
const survivorsMeta = "com.git-pull.libtmux-mcp/survivors"

// parseTmuxRun checks the arguments as the contract's schema would; the
// broker checks the script and the output limits (Request.Check).
func (s *server) parseTmuxRun(raw json.RawMessage) (*broker.Request, broker.Outcome) {
	bad := func(code broker.Code, format string, a ...any) (*broker.Request, broker.Outcome) {
		return nil, broker.Outcome{Code: code, Message: fmt.Sprintf(format, a...), Delivery: broker.NotSent}
	}
	args, shape := decodeTmuxRunArgs(raw)
	if shape != nil {
		code := broker.CodeInvalidScript
		if shape.target {
			code = broker.CodeInvalidTarget
		}
		return bad(code, "%s", shape.msg)
	}
	t := args.Target
	switch {
	case t.Kind != "pane":
		return bad(broker.CodeInvalidTarget, "target.kind must be \"pane\"")
	case !tmux.ValidPaneID(t.ID):
		return bad(broker.CodeInvalidTarget, "target.id %q is not a pane id like %%3; call list_panes", t.ID)
	case t.Generation == "" || len(t.Generation) > 128:
		return bad(broker.CodeInvalidTarget, "target.generation must be the serverGeneration from list_panes")
	case args.Script == nil:
		return bad(broker.CodeInvalidScript, "script is required")
	}
	limit := func(p *int) int {
		if p == nil {
			return broker.DefaultOutputLimit
		}
		return *p
	}
	req := &broker.Request{
		Pane: t.ID, Generation: t.Generation, Script: []byte(*args.Script),
		StdoutLimit: limit(args.StdoutLimit), StderrLimit: limit(args.StderrLimit),
	}
	if out, ok := req.Check(); !ok {
		return nil, out
	}
	return req, broker.Outcome{}
}

// runNextStep is the message of a tmux_run refusal with the step that
// helps in this case: package broker says what went wrong, and names in
// out.Recovery the steps that are this package's to say (which tool or
// signal helps).
func (s *server) runNextStep(ctx context.Context, pane string, out broker.Outcome) string {
	lend := fmt.Sprintf(`only a person can lend it: ask them to type eval "$(libtmux-mcp enroll)" at the zsh prompt of pane %s, then call again`, pane)
	hup := fmt.Sprintf("whoever runs the server sends it SIGHUP (kill -HUP %d) for a fresh invitation of its --enroll-pane panes", os.Getpid())
	switch out.Recovery {
	case broker.RecoveryReinvite:
		return out.Message + "; " + lend + " (or " + hup + ")"
	case broker.RecoveryEnroll:
	default:
		return out.Message
	}
	state := enroll.StateNone
	invites := false
	if s.deps.Enrollments != nil {
		_, state = s.deps.Enrollments.Lookup(pane)
		invites = s.deps.Enrollments.Invites(pane)
	}
	switch {
	case state == enroll.StateInvited:
		return fmt.Sprintf(`pane %s is invited but not enrolled yet: a person must source the invitation in that pane's zsh (eval "$(libtmux-mcp enroll)" does it at once; an --enroll-pane invitation is the source command the server printed on its stderr); then call again`, pane)
	case !s.paneExists(ctx, pane):
		return fmt.Sprintf("there is no pane %s on this server; call list_panes: tmux_run runs in the panes whose enrollment is \"enrolled\"", pane)
	case invites:
		return fmt.Sprintf("the invitation for pane %s expired unused: %s, or %s", pane, lend, hup)
	}
	return fmt.Sprintf(`pane %s was never enrolled: %s; list_panes shows which panes are "enrolled"`, pane, lend)
}

// paneExists reports whether pane is on the server; true when tmux cannot
// say.
func (s *server) paneExists(ctx context.Context, pane string) bool {
	if s.tmux == nil {
		return true
	}
	snap, err := s.tmux.Snapshot(ctx, tmux.Want{Panes: true})
	return err != nil || slices.ContainsFunc(snap.Panes, func(p tmux.Pane) bool { return p.ID == pane })
}

// tmuxRunExample is the shape of tmux_run's arguments, for messages.
const tmuxRunExample = `{"target":{"kind":"pane","id":"%3","generation":"<serverGeneration from list_panes>"},"script":"make test"}`

// argShapeError is an argument of the wrong shape, said in the model's
// terms: which argument, what it must be, what it was. target says whether
// it is the target's (invalid_target) or another's (invalid_script).
type argShapeError struct {
	target bool
	msg    string
}

// decodeTmuxRunArgs reads tmux_run's arguments member by member, so that
// every mistake names the argument and its expected shape, never a
// decoder's words.
func decodeTmuxRunArgs(raw json.RawMessage) (tmuxRunArgs, *argShapeError) {
	var args tmuxRunArgs
	top, err := object(raw, "tmux_run's arguments object", []string{"target", "script", "stdout_limit", "stderr_limit"}, false)
	if err != nil {
		return args, err
	}
	if t, ok := top["target"]; ok {
		fields, err := object(t, "target", []string{"kind", "id", "generation"}, true)
		if err != nil {
			return args, err
		}
		for name, dst := range map[string]*string{"kind": &args.Target.Kind, "id": &args.Target.ID, "generation": &args.Target.Generation} {
			if v, ok := fields[name]; ok && json.Unmarshal(v, dst) != nil {
				return args, &argShapeError{true, fmt.Sprintf("target.%s must be a string, not %s; expected %s", name, jsonType(v), tmuxRunExample)}
			}
		}
	}
	if v, ok := top["script"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return args, &argShapeError{false, fmt.Sprintf("script must be a string (a POSIX sh script), not %s; expected %s", jsonType(v), tmuxRunExample)}
		}
		args.Script = &s
	}
	for name, dst := range map[string]**int{"stdout_limit": &args.StdoutLimit, "stderr_limit": &args.StderrLimit} {
		if v, ok := top[name]; ok {
			var n int
			if json.Unmarshal(v, &n) != nil {
				return args, &argShapeError{false, fmt.Sprintf("%s must be an integer number of bytes, not %s; omit it for the default", name, jsonType(v))}
			}
			*dst = &n
		}
	}
	return args, nil
}

// object reads raw as a JSON object whose members are among names.
func object(raw json.RawMessage, what string, names []string, isTarget bool) (map[string]json.RawMessage, *argShapeError) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, &argShapeError{isTarget, fmt.Sprintf("%s must be an object, not %s; expected %s", what, jsonType(raw), tmuxRunExample)}
	}
	for k := range m {
		if !slices.Contains(names, k) {
			return nil, &argShapeError{isTarget, fmt.Sprintf("%s has no member %q: its members are %s; expected %s", what, argcheck.ShortQuote(k), strings.Join(names, ", "), tmuxRunExample)}
		}
	}
	return m, nil
}

// jsonType names the kind of a JSON value, for messages.
func jsonType(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "":
		return "nothing"
	case s[0] == '{':
		return "an object"
	case s[0] == '[':
		return "an array"
	case s[0] == '"':
		return "a string"
	case s == "true" || s == "false":
		return "a boolean"
	case s == "null":
		return "null"
	}
	return "a number"
}
