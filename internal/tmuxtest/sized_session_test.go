package tmuxtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A session's first program starts at the size SizedSession asked for, on
// every tmux (3.2a made a detached session 80x24, and the resize that
// followed could come after a shell had read its size), and the server's
// window-size is left as it was.
func TestSizedSessionStartsAtItsSize(t *testing.T) {
	t.Parallel()
	s := Start(t)
	out := filepath.Join(s.Dir, "size")
	s.SizedSession(150, 50, "--", "sh", "-c", `stty size > "$0.tmp" && mv "$0.tmp" "$0"; exec cat`, out)
	WaitFile(t, out)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "50 150\n" {
		t.Errorf("the pane's program started with a %q terminal (rows columns); want 50 150", strings.TrimSpace(string(got)))
	}
	if size := strings.TrimSpace(s.Run("display-message", "-p", "#{window_width}x#{window_height}")); size != "150x50" {
		t.Errorf("the window is %s; want 150x50", size)
	}
	if ws := strings.TrimSpace(s.Run("show-options", "-gv", "window-size")); ws != "latest" {
		t.Errorf("window-size is %q after SizedSession; want tmux's default, latest", ws)
	}
}
