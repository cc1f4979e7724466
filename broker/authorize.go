package broker

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/enroll"
)

// authorizedFast decides without tmux that the run may go to the enrolled shell. It holds only
// when every fact the tmux check would read is known otherwise:
//   - the request names the server generation the enrollment belongs to, and the server's
//     socket is still the inode that server made (a server started after removing it would
//     not be);
//   - the enrolled process is alive and is the same process (pid and start time: its process
//     generation), and its parent is still that server's pid: a pane's process is the server's
//     child, and an orphan never gets its parent back, so the server has not died or been
//     replaced in between;
//   - it still has the pane's terminal as its controlling terminal: respawn-pane -k hangs the
//     old terminal up, which clears it even for a shell that survives;
//   - the enrollment is not lost (exit, unenroll, exec, replacement).
//
// A dead pane's process has exited, and a respawned pane's old process has lost its terminal or
// exited, so pane_dead and process_changed never pass here. Whatever fails sends the run to
// authorizeSlow, which reads tmux and answers the documented code.
//
// st is the enrolled process's stat, read by the caller.
func (b *Broker) authorizedFast(e *enroll.Enrollment, state string, sh *shell, req Request, st peercred.Stat) bool {
	if state != enroll.StateEnrolled || e.Lost() || sh == nil || sh.e != e || sh.tty == 0 ||
		req.Generation != b.server.Generation || b.serverSock == nil {
		return false
	}
	if fi, err := os.Stat(b.server.SocketPath); err != nil || !os.SameFile(fi, b.serverSock) {
		return false
	}
	return st.State != 'Z' && st.State != 'X' && st.PPID == b.server.PID && st.TTY == sh.tty &&
		peercred.ProcessGeneration(b.bootID, e.PID, st.StartTime) == e.ProcessGeneration
}

// authorizeSlow reads the pane and the server generation from tmux in one call and checks them
// in the documented order. It answers the refusal, or nil when tmux shows the enrolled shell
// alive in its pane.
func (b *Broker) authorizeSlow(ctx context.Context, e *enroll.Enrollment, state string, req Request) *refusal {
	p, gen, err := b.pane(ctx, req.Pane)
	switch {
	case errors.Is(err, errNoPane):
		return refused(CodeEnrollmentLost, fmt.Sprintf("pane %s no longer exists, so its enrolled shell is gone; enroll another pane", req.Pane))
	case err != nil:
		return refused(CodeBrokerUnavailable, fmt.Sprintf("cannot read pane %s from tmux: %v", req.Pane, err))
	}
	if req.Generation != gen {
		return refused(CodeStaleGeneration, fmt.Sprintf("target generation %q is not the server's current generation %q; call list_panes and use its serverGeneration", req.Generation, gen))
	}
	switch {
	case p.PID != e.PID:
		return refused(CodeProcessChanged, fmt.Sprintf("pane %s now runs process %d, not the enrolled shell %d (respawned?); a person must enroll the new shell", req.Pane, p.PID, e.PID))
	case p.Dead:
		return refused(CodePaneDead, fmt.Sprintf("pane %s is dead", req.Pane))
	case state == enroll.StateLost || e.Lost():
		return refused(CodeEnrollmentLost, fmt.Sprintf("the enrolled shell of pane %s exited, exec'd another program or unenrolled; send the server SIGHUP to invite the pane again", req.Pane))
	}
	if start, err := peercred.StartTime(e.PID); err != nil || peercred.ProcessGeneration(b.bootID, e.PID, start) != e.ProcessGeneration {
		return refused(CodeProcessChanged, fmt.Sprintf("process %d of pane %s is no longer the enrolled shell", e.PID, req.Pane))
	}
	return nil
}
