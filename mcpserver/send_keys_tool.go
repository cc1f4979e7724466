package mcpserver

import (
	"context"
	"slices"
	"strings"

	"github.com/libtmux/libtmux-mcp/live"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type sendKeysParams struct {
	keyInput
	Force string `json:"force,omitempty"`
}

type sendKeysResult struct {
	PaneID string   `json:"paneId"`
	Cohort []string `json:"cohort"` // the panes input to PaneID reaches (synchronize-panes)
}

func sendKeysTool() tool {
	return &typedTool[sendKeysParams, sendKeysResult]{toolSpec: toolSpec{
		name:    "send_keys",
		toolset: Execute,
		title:   "Send keys",
		description: "Types key names or literal text into a pane, then Enter if asked; answers the panes reached. Commands: run_shell_command; long text: paste_text. " +
			`Example: {"paneId":"%3","keys":["C-c"]}.`,
		capability: inputCapability,
	}, handle: (*server).sendKeys}
}

func (s *server) sendKeys(ctx context.Context, _ *mcp.CallToolRequest, in sendKeysParams) (sendKeysResult, error) {
	args, _, err := in.args()
	if err != nil {
		return sendKeysResult{}, err
	}
	c, err := s.protect(ctx, "pane", in.PaneID, in.Force, forInput)
	if err != nil {
		return sendKeysResult{}, err
	}
	defer s.inputTo(c.cohort...)()
	prompts := s.atPrompts(c)
	if err := s.send(ctx, in.keyInput, args); err != nil {
		return sendKeysResult{}, err
	}
	s.noteTypedAll(c.cohort, in.Text)
	s.noteUnentered(c.cohort, in.keyInput, false, prompts)
	return sendKeysResult{PaneID: in.PaneID, Cohort: c.cohort}, nil
}

// atPrompts tells, for each pane of c's cohort, whether its shell is at
// its prompt (so that input goes to the shell's command line).
func (s *server) atPrompts(c checked) map[string]bool {
	at := map[string]bool{}
	for _, pn := range c.snap.Panes {
		if slices.Contains(c.cohort, pn.ID) {
			at[pn.ID] = shells[strings.TrimPrefix(pn.CurrentCommand, "-")] && atPrompt(pn.PID)
		}
	}
	return at
}

// noteUnentered records what in (in a bracketed paste, when bracketed)
// left on the command lines of panes (see unentered); prompts says which
// were at their shell's prompt before it.
func (s *server) noteUnentered(panes []string, in keyInput, bracketed bool, prompts map[string]bool) {
	for _, p := range panes {
		var v *live.View
		if s.live != nil {
			v = s.live.Lookup(p)
		}
		s.unentered.typed(p, in, bracketed, prompts[p], v)
	}
}

// noteTypedAll tells wait_for_text that text was typed into each pane, so
// the echo of it is not taken for the program's output.
func (s *server) noteTypedAll(panes []string, text string) {
	for _, p := range panes {
		s.noteTyped(p, text)
	}
}
