package mcpserver

import (
	"context"

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
			`Example: {"paneId":"%3","keys":["C-c"]}`,
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
