package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type showOptionParams struct {
	Scope  string `json:"scope" jsonschema:"server, session, window or pane"`
	Target string `json:"target,omitempty" jsonschema:"omitted: global"`
	Name   string `json:"name"`
}

type showOptionResult struct {
	Scope  string `json:"scope"`
	Target string `json:"target"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	Set    bool   `json:"set" jsonschema:"false: not set here (may inherit)"`
	Note   string `json:"note,omitempty"`
}

// optionNameShape is an option name, a user option (@name) or an element
// of an array option (name[2]); it cannot start with - (a flag to tmux).
// The name is at most 128 bytes (validOptionName): as a {0,127}, regexp
// would compile the bound into hundreds of instructions at every start.
var optionNameShape = regexp.MustCompile(`^@?([A-Za-z0-9][A-Za-z0-9_-]*)(\[[0-9]{1,5}\])?$`)

func validOptionName(s string) bool {
	m := optionNameShape.FindStringSubmatch(s)
	return m != nil && len(m[1]) <= 128
}

func showOptionTool() tool {
	return &typedTool[showOptionParams, showOptionResult]{toolSpec: toolSpec{
		name:    "show_option",
		toolset: Inspect,
		title:   "Show option",
		description: "One option's value at a scope, as tmux stores it (set:false: only inherited). " +
			`Example: {"scope":"window","target":"@1","name":"mode-keys"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTmuxMetadata, OutputConfiguredCommand},
			InputLiteralization: map[string]Literalization{"name": litValidated, "target": litValidated},
		},
	}, handle: (*server).showOption}
}

func (s *server) showOption(ctx context.Context, _ *mcp.CallToolRequest, in showOptionParams) (showOptionResult, error) {
	if !validOptionName(in.Name) {
		return showOptionResult{}, fmt.Errorf("option name %q is not valid: use letters, digits, - and _ (history-limit), @ for user options (@my-option), [N] for an array element", in.Name)
	}
	args, kind, err := scopeArgs("show-options", in.Scope, in.Target, true)
	if err != nil {
		return showOptionResult{}, err
	}
	res := showOptionResult{Scope: in.Scope, Target: in.Target, Name: in.Name}
	out, err := s.tmux.Run(ctx, append(args, "-v", in.Name)...)
	var te *tmux.Error
	switch {
	case err != nil && errors.As(err, &te) && strings.Contains(te.Stderr, "invalid option") && strings.HasPrefix(in.Name, "@"):
		res.Note = "this user option is not set in this table"
		return res, nil
	case err != nil && errors.As(err, &te) && strings.Contains(te.Stderr, "invalid option"):
		return showOptionResult{}, fmt.Errorf("tmux has no option %q (%s); see `man tmux` OPTIONS for the names", in.Name, strings.TrimSpace(te.Stderr))
	case err != nil && kind != "":
		return showOptionResult{}, s.explain(ctx, err, kind, in.Target)
	case err != nil:
		return showOptionResult{}, s.fail(err)
	}
	if out == "" {
		res.Note = "not set at this scope; it may be inherited: try the global table (omit target) or another scope"
		return res, nil
	}
	res.Value, res.Set = strings.TrimSuffix(out, "\n"), true
	return res, nil
}

// scopeArgs builds cmd's scope flags for scope and target: server (-s),
// session (-t $1, or -g), window (-w -t @2, or -w -g), pane (-p -t %3).
// It returns the kind of the target for error messages ("" for none).
func scopeArgs(cmd, scope, target string, server bool) ([]string, string, error) {
	args := []string{cmd}
	kind := ""
	switch scope {
	case "server":
		if !server {
			return nil, "", errors.New("scope server has no hooks of its own; use session, window or pane")
		}
		if target != "" {
			return nil, "", errors.New("scope server takes no target; leave it out")
		}
		return append(args, "-s"), "", nil
	case "session":
		kind = "session"
	case "window":
		kind = "window"
		args = append(args, "-w")
	case "pane":
		kind = "pane"
		args = append(args, "-p")
		if target == "" {
			return nil, "", errors.New("scope pane needs target, a pane id (%3); call list_panes for the ids")
		}
	default:
		return nil, "", fmt.Errorf("scope %q is not one of server, session, window, pane", scope)
	}
	if target == "" {
		return append(args, "-g"), "", nil
	}
	if err := checkID(kind, target); err != nil {
		return nil, "", err
	}
	return append(args, "-t", target), kind, nil
}
