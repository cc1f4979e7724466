package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type showEnvironmentParams struct {
	SessionID string `json:"sessionId,omitempty" jsonschema:"omitted: global"`
	Name      string `json:"name,omitempty"`
}

type envVar struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Removed bool   `json:"removed,omitempty" jsonschema:"marked for removal from new processes"`
}

type showEnvironmentResult struct {
	Variables        []envVar `json:"variables"`
	DroppedVariables int      `json:"droppedVariables"`
	Note             string   `json:"note,omitempty"`
}

// envNameShape is an environment variable's name, at most 256 bytes long
// (validEnvName). The bound is not a {0,255}: regexp would compile it into
// hundreds of instructions, at every process start.
var envNameShape = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func validEnvName(s string) bool { return len(s) <= 256 && envNameShape.MatchString(s) }

func showEnvironmentTool() tool {
	return &typedTool[showEnvironmentParams, showEnvironmentResult]{toolSpec: toolSpec{
		name:    "show_environment",
		toolset: Inspect,
		title:   "Show environment",
		description: "The environment tmux gives new processes; values may hold secrets. " +
			`Example: {"sessionId":"$1","name":"PATH"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputProcessEnvironment},
			InputLiteralization: map[string]Literalization{"name": litValidated, "sessionId": litValidated},
		},
	}, handle: (*server).showEnvironment}
}

func (s *server) showEnvironment(ctx context.Context, _ *mcp.CallToolRequest, in showEnvironmentParams) (showEnvironmentResult, error) {
	args := []string{"show-environment"}
	if in.SessionID == "" {
		args = append(args, "-g")
	} else {
		if err := checkID("session", in.SessionID); err != nil {
			return showEnvironmentResult{}, err
		}
		args = append(args, "-t", in.SessionID)
	}
	if in.Name != "" {
		if !validEnvName(in.Name) {
			return showEnvironmentResult{}, fmt.Errorf("variable name %q is not valid: letters, digits and _, not starting with a digit", in.Name)
		}
		args = append(args, in.Name)
	}
	out, err := s.tmux.Run(ctx, args...)
	res := showEnvironmentResult{Variables: []envVar{}}
	var te *tmux.Error
	switch {
	case err != nil && errors.As(err, &te) && strings.Contains(te.Stderr, "unknown variable"):
		res.Note = fmt.Sprintf("%s is not in this environment", in.Name)
		return res, nil
	case err != nil && in.SessionID != "":
		return showEnvironmentResult{}, s.explain(ctx, err, "session", in.SessionID)
	case err != nil:
		return showEnvironmentResult{}, s.fail(err)
	}
	chars := s.budget.Chars
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		n := utf8.RuneCountInString(line)
		if len(res.Variables) >= s.budget.Lines || n > chars {
			res.DroppedVariables++
			continue
		}
		chars -= n
		if name, ok := strings.CutPrefix(line, "-"); ok {
			res.Variables = append(res.Variables, envVar{Name: name, Removed: true})
			continue
		}
		name, value, _ := strings.Cut(line, "=")
		res.Variables = append(res.Variables, envVar{Name: name, Value: value})
	}
	if res.DroppedVariables > 0 {
		res.Note = "some variables were left out to stay within the read budget; ask for one with name"
	}
	return res, nil
}
