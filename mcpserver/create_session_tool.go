package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type createSessionParams struct {
	SessionName    string `json:"sessionName,omitempty"`
	Width          int    `json:"width,omitempty"`
	Height         int    `json:"height,omitempty"`
	StartDirectory string `json:"startDirectory,omitempty" jsonschema:"absolute"`
}

type createSessionResult struct {
	SessionID   string `json:"sessionId"`
	SessionName string `json:"sessionName"`
	WindowID    string `json:"windowId"`
	PaneID      string `json:"paneId"`
	Width       int    `json:"width"`
	Height      int    `json:"height"`
	Note        string `json:"note,omitempty"`
}

func createSessionTool() tool {
	return &typedTool[createSessionParams, createSessionResult]{toolSpec: toolSpec{
		name:    "create_session",
		toolset: Manage,
		title:   "Create session",
		description: "Starts a detached session running a shell; answers its ids. " +
			`Example: {"sessionName":"build","width":200,"height":50}`,
		capability: Capability{
			ProcessReach: ReachNone,
			Effects:      []Effect{EffectChange},
			Outputs:      []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{
				"sessionName":    litFormat,
				"startDirectory": litFormat,
			},
		},
	}, handle: (*server).createSession}
}

func (s *server) createSession(ctx context.Context, _ *mcp.CallToolRequest, in createSessionParams) (createSessionResult, error) {
	if in.SessionName != "" {
		if err := checkPrintableText("sessionName", in.SessionName); err != nil {
			return createSessionResult{}, err
		}
	}
	if err := checkSize("width", in.Width); err != nil {
		return createSessionResult{}, err
	}
	if err := checkSize("height", in.Height); err != nil {
		return createSessionResult{}, err
	}
	if err := checkDirectory(in.StartDirectory); err != nil {
		return createSessionResult{}, err
	}
	args := []string{"new-session", "-d"}
	if in.SessionName != "" {
		args = append(args, "-s", formatArg(in.SessionName))
	}
	if in.Width > 0 {
		args = append(args, "-x", strconv.Itoa(in.Width))
	}
	if in.Height > 0 {
		args = append(args, "-y", strconv.Itoa(in.Height))
	}
	if in.StartDirectory != "" {
		args = append(args, "-c", formatArg(in.StartDirectory))
	}
	v, err := s.tmux.RunPrinting(ctx, args, "session_id", "window_id", "pane_id", "window_width", "window_height", "session_name")
	if err != nil {
		var te *tmux.Error
		if errors.As(err, &te) && strings.Contains(te.Stderr, "duplicate session") {
			return createSessionResult{}, fmt.Errorf("a session named %q exists already; pick another name, or use it (list_sessions)", in.SessionName)
		}
		return createSessionResult{}, s.fail(err)
	}
	res := createSessionResult{SessionID: v[0], WindowID: v[1], PaneID: v[2], SessionName: v[5]}
	res.Width, _ = strconv.Atoi(v[3])
	res.Height, _ = strconv.Atoi(v[4])
	if (in.Width > 0 && res.Width != in.Width) || (in.Height > 0 && res.Height != in.Height) {
		// tmux 3.2a gives a detached session 80x24 whatever -x and -y say
		// (under the default window-size latest): size its window as asked.
		size, err := s.tmux.RunThenRead(ctx, resizeArgs(res.WindowID, in.Width, in.Height), res.WindowID, "window_width", "window_height")
		if err != nil {
			return createSessionResult{}, fmt.Errorf("session %s was created %dx%d; sizing it as asked failed: %w", res.SessionID, res.Width, res.Height, s.fail(err))
		}
		res.Width, _ = strconv.Atoi(size[0])
		res.Height, _ = strconv.Atoi(size[1])
	}
	if in.SessionName != "" {
		res.Note = storedNote(in.SessionName, res.SessionName)
	}
	return res, nil
}
