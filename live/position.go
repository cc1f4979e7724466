package live

import (
	"context"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// Position reads the pane's position (history, cursor, size, dead) over
// the view's connection: a round trip, not a process. Its answer comes
// after every %output line tmux queued before it, so once it returns the
// view holds what tmux had read from the pane until then.
func (v *View) Position(ctx context.Context) (tmux.Position, error) {
	seps := tmux.NewSeparators()
	out, err := v.Command(ctx, tmux.PositionArgs(v.Pane(), seps)...)
	if err != nil {
		return tmux.Position{}, err
	}
	return tmux.ParsePosition(out, seps)
}
