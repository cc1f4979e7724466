package mcpserver

import (
	"context"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type resizeWindowParams struct {
	WindowID string `json:"windowId"`
	Width    int    `json:"width,omitempty"`
	Height   int    `json:"height,omitempty"`
}

type resizeWindowResult struct {
	WindowID string `json:"windowId"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
}

func resizeWindowTool() tool {
	return &typedTool[resizeWindowParams, resizeWindowResult]{toolSpec: toolSpec{
		name:    "resize_window",
		toolset: Manage,
		title:   "Resize window",
		description: "Sets a window's size. " +
			`Example: {"windowId":"@2","width":200,"height":50}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{},
		},
	}, handle: (*server).resizeWindow}
}

func (s *server) resizeWindow(ctx context.Context, _ *mcp.CallToolRequest, in resizeWindowParams) (resizeWindowResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return resizeWindowResult{}, err
	}
	if in.Width == 0 && in.Height == 0 {
		return resizeWindowResult{}, errors.New("give width, height or both")
	}
	if err := checkSize("width", in.Width); err != nil {
		return resizeWindowResult{}, err
	}
	if err := checkSize("height", in.Height); err != nil {
		return resizeWindowResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, resizeArgs(in.WindowID, in.Width, in.Height), in.WindowID, "window_width", "window_height")
	if err != nil {
		return resizeWindowResult{}, s.explainTargets(ctx, err, target{"window", in.WindowID})
	}
	res := resizeWindowResult{WindowID: in.WindowID}
	res.Width, _ = strconv.Atoi(v[0])
	res.Height, _ = strconv.Atoi(v[1])
	return res, nil
}

// resizeArgs is the resize-window command for a window; a zero width or
// height is left as it is.
func resizeArgs(window string, width, height int) []string {
	args := []string{"resize-window", "-t", window}
	if width > 0 {
		args = append(args, "-x", strconv.Itoa(width))
	}
	if height > 0 {
		args = append(args, "-y", strconv.Itoa(height))
	}
	return args
}
