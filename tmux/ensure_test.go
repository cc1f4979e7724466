package tmux_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/libtmux/libtmux-mcp/internal/tmuxtest"
	"github.com/libtmux/libtmux-mcp/tmux"
)

// TestEnsureProcessCount counts tmux processes at startup: one for a
// running server (identity, version and the rows asked for together), two
// when this process starts the server.
func TestEnsureProcessCount(t *testing.T) {
	ts := tmuxtest.Start(t)
	ts.NewSession("one", "sh")
	c, err := tmux.NewClient(tmux.Route{SocketPath: ts.Socket}, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Ensure(context.Background(), tmux.Want{Panes: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Calls(); n != 1 {
		t.Errorf("Ensure on a running server started %d tmux processes; want 1", n)
	}
	if st.Provenance.State != tmux.StateExisting || len(st.Snapshot.Panes) != 1 || st.Version.Less(tmux.MinVersion) {
		t.Errorf("Ensure = %+v", st)
	}

	fresh, err := tmux.NewClient(tmux.Route{SocketPath: filepath.Join(ts.Dir, "fresh")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fresh.Run(context.Background(), "kill-server") })
	st, err = fresh.Ensure(context.Background(), tmux.Want{})
	if err != nil {
		t.Fatal(err)
	}
	if n := fresh.Calls(); n != 2 {
		t.Errorf("Ensure that starts the server started %d tmux processes; want 2", n)
	}
	if st.Provenance.State != tmux.StateNew {
		t.Errorf("provenance of a server this client started = %+v; want new", st.Provenance)
	}
}
