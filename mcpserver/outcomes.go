package mcpserver

import "github.com/libtmux/libtmux-mcp/internal/shellrun"

// The outcomes the waiting tools answer, one list: each tool's output
// schema publishes its own as the enum of its outcome field (see
// outputSchemaFor and outcomeEnum).
const (
	outcomeCompleted   = string(shellrun.Completed)
	outcomeTimedOut    = string(shellrun.TimedOut)
	outcomeCancelled   = string(shellrun.Cancelled)
	outcomePaneDied    = string(shellrun.PaneDied)
	outcomeInterrupted = string(shellrun.Interrupted)
	outcomeMatched     = "matched"     // wait_for_text: the pattern appeared
	outcomeSignalled   = "signalled"   // wait_for_channel: the channel was signalled
	outcomeServerDied  = "server_died" // wait_for_channel: the tmux server went away
)

// outcomeEnum is implemented by the answers that have an outcome field:
// the values it can hold.
type outcomeEnum interface{ outcomes() []string }

func (runShellCommandResult) outcomes() []string {
	out := make([]string, len(shellrun.Outcomes))
	for i, o := range shellrun.Outcomes {
		out[i] = string(o)
	}
	return out
}

func (waitForTextResult) outcomes() []string {
	return []string{outcomeMatched, outcomeTimedOut, outcomeCancelled, outcomePaneDied}
}

func (waitForChannelResult) outcomes() []string {
	return []string{outcomeSignalled, outcomeTimedOut, outcomeCancelled, outcomeServerDied}
}
