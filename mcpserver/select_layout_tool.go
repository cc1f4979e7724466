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

type selectLayoutParams struct {
	WindowID string `json:"windowId"`
	Layout   string `json:"layout" jsonschema:"even-horizontal, even-vertical, main-horizontal, main-vertical, tiled, or a list_windows layout"`
}

type selectLayoutResult struct {
	WindowID string `json:"windowId"`
	Layout   string `json:"layout" `
}

func selectLayoutTool() tool {
	return &typedTool[selectLayoutParams, selectLayoutResult]{toolSpec: toolSpec{
		name:    "select_layout",
		toolset: Manage,
		title:   "Select layout",
		description: "Arranges a window's panes. " +
			`Example: {"windowId":"@2","layout":"tiled"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"layout": litValidated},
		},
	}, handle: (*server).selectLayout}
}

// layoutNames are tmux 3.3a's named layouts.
var layoutNames = []string{"even-horizontal", "even-vertical", "main-horizontal", "main-vertical", "tiled"}

// layoutString is the shape of a saved layout: a 4-digit hex checksum, a
// comma, then cells of WxH,X,Y followed by ,ID or a {…} or […] group.
var layoutString = regexp.MustCompile(`^[0-9a-f]{4},[0-9x,{}\[\]]+$`)

// maxLayout bounds a saved layout string.
const maxLayout = 8192

// resolveLayout returns the layout to hand tmux: a full layout name for a
// name or a unique prefix of one, or a saved layout string whose checksum
// is right. tmux 3.3a's server crashes on some malformed layouts (an
// ambiguous prefix, a string whose first character is not a hex digit),
// so nothing else reaches it.
func resolveLayout(l string) (string, error) {
	if l == "" {
		return "", fmt.Errorf("layout is empty; give one of %s, or a layout string from list_windows", strings.Join(layoutNames, ", "))
	}
	var matches []string
	for _, n := range layoutNames {
		if strings.HasPrefix(n, l) {
			matches = append(matches, n)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case len(matches) > 1:
		return "", fmt.Errorf("layout %q could be %s; give more of the name", l, strings.Join(matches, " or "))
	}
	if len(l) > maxLayout || !layoutString.MatchString(l) {
		return "", fmt.Errorf("layout %q is neither a layout name (%s) nor a saved layout string (like 9295,80x24,0,0[80x11,0,0,0,80x12,0,12,1] as list_windows reports it)",
			l, strings.Join(layoutNames, ", "))
	}
	if want := fmt.Sprintf("%04x", layoutChecksum(l[5:])); l[:4] != want {
		return "", fmt.Errorf("layout %q has checksum %s but its cells sum to %s; copy the layout string whole from list_windows", l, l[:4], want)
	}
	return l, nil
}

// layoutChecksum is tmux's checksum of a layout's cells (layout_checksum).
func layoutChecksum(cells string) uint16 {
	var c uint16
	for i := 0; i < len(cells); i++ {
		c = c>>1 | (c&1)<<15
		c += uint16(cells[i])
	}
	return c
}

func (s *server) selectLayout(ctx context.Context, _ *mcp.CallToolRequest, in selectLayoutParams) (selectLayoutResult, error) {
	if err := checkID("window", in.WindowID); err != nil {
		return selectLayoutResult{}, err
	}
	layout, err := resolveLayout(in.Layout)
	if err != nil {
		return selectLayoutResult{}, err
	}
	v, err := s.tmux.RunThenRead(ctx, []string{"select-layout", "-t", in.WindowID, layout}, in.WindowID, "window_layout")
	if err != nil {
		if layout != in.Layout || errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrNoServer) {
			return selectLayoutResult{}, s.explainTargets(ctx, err, target{"window", in.WindowID})
		}
		// tmux says why a saved layout does not fit in words that differ by
		// version ("invalid layout", "can't set layout"): say it once here.
		return selectLayoutResult{}, fmt.Errorf("%w; a saved layout fits only a window with the same number of panes: call list_windows for this window's layout, or give a layout name (%s)",
			s.explainTargets(ctx, err, target{"window", in.WindowID}), strings.Join(layoutNames, ", "))
	}
	return selectLayoutResult{WindowID: in.WindowID, Layout: v[0]}, nil
}
