package mcpserver

import (
	"context"
	"strings"
)

// startDirectory is the -c argument of a command that starts a shell: the
// directory the caller gave, or else the current directory of target (a
// pane, or a session's active pane), read first and passed literally.
// tmux would expand "#{pane_current_path}" in the session's context, the
// active pane of its current window, whatever the target. With no
// directory to give (tmux does not know it), tmux picks as it would.
func (s *server) startDirectory(ctx context.Context, given, target string) ([]string, error) {
	dir := given
	if dir == "" {
		out, err := s.tmux.Run(ctx, "display-message", "-p", "-t", target, "#{pane_current_path}")
		if err != nil {
			return nil, err
		}
		dir = strings.TrimSuffix(out, "\n")
	}
	if dir == "" {
		return nil, nil
	}
	return []string{"-c", formatArg(dir)}, nil
}
