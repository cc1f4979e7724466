package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/tmux"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type waitForChannelParams struct {
	Channel   string `json:"channel" jsonschema:"letters, digits, . _ - :"`
	TimeoutMs *int64 `json:"timeoutMs,omitempty"`
}

type waitForChannelResult struct {
	Outcome            string `json:"outcome"`
	EffectiveTimeoutMs int64  `json:"effectiveTimeoutMs"`
	Note               string `json:"note,omitempty"`
}

func waitForChannelTool() tool {
	return &typedTool[waitForChannelParams, waitForChannelResult]{toolSpec: toolSpec{
		name:    "wait_for_channel",
		blocks:  true,
		toolset: Execute,
		title:   "Wait for channel",
		description: "Waits until the channel is signalled: end what you send with `; tmux wait-for -S NAME`. " +
			`Example: {"channel":"build-done","timeoutMs":60000}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"channel": litValidated},
		},
	}, handle: (*server).waitForChannel}
}

// channelShape is a channel name, at most 128 bytes (validChannel; a
// {1,128} would compile into hundreds of instructions at every start).
var channelShape = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

func validChannel(s string) bool { return len(s) <= 128 && channelShape.MatchString(s) }

// privateChannelPrefix names the channels run_shell_command waits on.
const privateChannelPrefix = "ltmcp-"

func checkChannel(name string) error {
	if !validChannel(name) {
		return fmt.Errorf("channel %q must be 1 to 128 letters, digits, '.', '_', '-' or ':'", name)
	}
	if strings.HasPrefix(name, privateChannelPrefix) {
		return fmt.Errorf("channel %q starts with %q, which run_shell_command keeps for its own completion signals; choose another name", name, privateChannelPrefix)
	}
	return nil
}

func (s *server) waitForChannel(ctx context.Context, req *mcp.CallToolRequest, in waitForChannelParams) (waitForChannelResult, error) {
	if err := checkChannel(in.Channel); err != nil {
		return waitForChannelResult{}, err
	}
	wctx, w := s.startWait(ctx, req, in.TimeoutMs, "wait_for_channel")
	defer w.end()
	res := waitForChannelResult{EffectiveTimeoutMs: w.ms()}
	// The per-call deadline follows the wait, not the command timeout;
	// wctx ends it first. wait-for also returns 0 when the server is
	// killed: the generation read just before the wait must still be the
	// server's after it.
	before, err := s.tmux.WaitFor(wctx, w.effective+time.Second, in.Channel)
	if outcome := s.ended(wctx, ctx); outcome != "" {
		res.Outcome = outcome
		if outcome == outcomeTimedOut {
			res.Note = fmt.Sprintf("nothing signalled %s within %d ms; wait again, or check that the sender runs `tmux wait-for -S %s` on this server", in.Channel, w.ms(), in.Channel)
		}
		return res, nil
	}
	if before.Generation == "" { // the wait never began
		if err == nil {
			err = errors.New("tmux printed no server identity before wait-for")
		}
		return waitForChannelResult{}, s.fail(err)
	}
	after, infoErr := s.tmux.Info(ctx)
	switch {
	case errors.Is(infoErr, tmux.ErrNoServer) || (infoErr == nil && after.Generation != before.Generation):
		res.Outcome = outcomeServerDied
		res.Note = "the tmux server stopped during the wait; nothing signalled the channel"
		return res, nil
	case err != nil:
		return waitForChannelResult{}, s.fail(err)
	}
	res.Outcome = outcomeSignalled
	return res, nil
}
