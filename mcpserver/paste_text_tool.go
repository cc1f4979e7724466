package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type pasteTextParams struct {
	PaneID    string `json:"paneId"`
	Text      string `json:"text"`
	Enter     bool   `json:"enter,omitempty"`
	Bracketed bool   `json:"bracketed,omitempty" jsonschema:"if the program enabled it"`
	Force     string `json:"force,omitempty"`
}

type pasteTextResult struct {
	PaneID string `json:"paneId"`
	Bytes  int    `json:"bytes"`
}

func pasteTextTool() tool {
	return &typedTool[pasteTextParams, pasteTextResult]{toolSpec: toolSpec{
		name:    "paste_text",
		toolset: Execute,
		title:   "Paste text",
		description: "Pastes literal text into one pane, not its synchronize-panes cohort. Keys: send_keys. " +
			`Example: {"paneId":"%3","text":"a\nb","bracketed":true}`,
		capability: Capability{
			ProcessReach:        ReachPaneInput,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"text": litLiteral},
		},
	}, handle: (*server).pasteText}
}

func (s *server) pasteText(ctx context.Context, _ *mcp.CallToolRequest, in pasteTextParams) (pasteTextResult, error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return pasteTextResult{}, err
	}
	if err := checkText("text", in.Text, maxPasteBytes); err != nil {
		return pasteTextResult{}, err
	}
	if in.Text == "" && !in.Enter {
		return pasteTextResult{}, errors.New("text is empty and enter is false: nothing to paste")
	}
	// The first check: before a buffer exists.
	if _, err := s.protect(ctx, "pane", in.PaneID, in.Force, forPaste); err != nil {
		return pasteTextResult{}, err
	}
	buf := "libtmux-mcp-" + uuid.NewString()
	pasted := false
	defer func() {
		if !pasted { // paste-buffer -d deletes it on success
			s.deleteBuffer(ctx, buf)
		}
	}()
	data := in.Text
	if in.Enter && !in.Bracketed {
		data += "\n" // paste-buffer turns a newline into Enter (CR)
	}
	if err := s.loadBuffer(ctx, buf, data); err != nil {
		return pasteTextResult{}, err
	}
	if testHookBeforePaste != nil {
		testHookBeforePaste()
	}
	// The second check, just before the paste: the pane may have changed
	// (died, entered a mode, been watched) while the buffer was loaded.
	c, err := s.protect(ctx, "pane", in.PaneID, in.Force, forPaste)
	if err != nil {
		return pasteTextResult{}, err
	}
	defer s.inputTo(in.PaneID)()
	prompts := s.atPrompts(c)
	flags := "-d"
	if in.Bracketed {
		flags = "-dp"
	}
	argv := []string{"paste-buffer", flags, "-b", buf, "-t", in.PaneID}
	if in.Bracketed && in.Enter {
		// Enter goes after the closing bracket, to this pane only.
		argv = []string{"paste-buffer", "-p", "-b", buf, "-t", in.PaneID,
			";", "set-buffer", "-b", buf, "--", "\n",
			";", "paste-buffer", "-d", "-b", buf, "-t", in.PaneID}
	}
	if _, err := s.tmux.Run(ctx, argv...); err != nil {
		return pasteTextResult{}, s.explain(ctx, err, "pane", in.PaneID)
	}
	pasted = true
	s.shell.NoteTyped(in.PaneID, in.Text)
	s.noteUnentered([]string{in.PaneID}, keyInput{Text: in.Text, Enter: in.Enter}, in.Bracketed, prompts)
	return pasteTextResult{PaneID: in.PaneID, Bytes: len(in.Text)}, nil
}

// testHookBeforePaste, when set by a test, runs between the buffer load
// and the second check.
var testHookBeforePaste func()

// loadBuffer sets buffer name to data, in pieces that each fit on a tmux
// command line (set-buffer -a appends; pieces end on character bounds).
func (s *server) loadBuffer(ctx context.Context, name, data string) error {
	for first := true; first || data != ""; first = false {
		n := min(len(data), maxTextBytes)
		for n < len(data) && n > 0 && !utf8.RuneStart(data[n]) {
			n--
		}
		argv := []string{"set-buffer", "-b", name}
		if !first {
			argv = append(argv, "-a")
		}
		if _, err := s.tmux.Run(ctx, append(argv, "--", tmux.Arg(data[:n]))...); err != nil {
			return s.fail(fmt.Errorf("load the paste buffer: %w", err))
		}
		data = data[n:]
	}
	return nil
}

// deleteBuffer removes a paste buffer on a failed path, even when ctx was
// cancelled: a private buffer must not outlive its call.
func (s *server) deleteBuffer(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.tmux.Run(ctx, "delete-buffer", "-b", name); err != nil && s.log != nil {
		s.log.Debug("paste buffer already gone", "buffer", name, "err", err)
	}
}
