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
	before, after, err := s.sizedOn32(ctx, in.Width > 0 || in.Height > 0)
	if err != nil {
		return createSessionResult{}, s.fail(err)
	}
	v, err := s.tmux.RunPrintingAround(ctx, before, args, after, "session_id", "window_id", "pane_id", "window_width", "window_height", "session_name")
	if err != nil && after != nil {
		// new-session failed (or the call ended), so tmux may have run
		// nothing after it: put window-size back, even for a call that was
		// cancelled.
		if _, rerr := s.tmux.Run(context.WithoutCancel(ctx), after...); rerr != nil {
			err = fmt.Errorf("%w; then setting window-size back failed: %w", err, rerr)
		}
	}
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
		// Not sized at birth (sizedOn32 did not apply): size the window
		// as asked.
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

// sizedOn32 returns the commands to run around new-session so that a
// session asked for a size is born that size. tmux 3.2 makes a detached
// session 80x24 whatever -x and -y say unless window-size is manual, and
// the pane's program (the user's shell) reads its size at once and may
// miss the resize that follows: a zsh that did wrapped its command lines
// at 80 columns. So on 3.2, when sized, the global window-size is manual
// for the new-session alone, in the same command list, and set back to
// what it was right after. Elsewhere (and when it is manual already) they
// are nil. (3.3a to 3.6a crash on new-session -d under a global manual.)
func (s *server) sizedOn32(ctx context.Context, sized bool) (before, after []string, err error) {
	if v := s.startup.Version; !sized || v.Major != 3 || v.Minor != 2 {
		return nil, nil, nil
	}
	out, err := s.tmux.Run(ctx, "show-options", "-gv", "window-size")
	if err != nil {
		return nil, nil, err
	}
	switch was := strings.TrimSpace(out); was {
	case "latest", "largest", "smallest":
		return []string{"set-option", "-g", "window-size", "manual"}, []string{"set-option", "-g", "window-size", was}, nil
	default: // manual already, or a value this code does not know: leave it
		return nil, nil, nil
	}
}
