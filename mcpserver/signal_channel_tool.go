package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type signalChannelParams struct {
	Channel string `json:"channel" jsonschema:"letters, digits, . _ - :"`
}

type signalChannelResult struct {
	Channel   string `json:"channel"`
	Signalled bool   `json:"signalled"`
}

func signalChannelTool() tool {
	return &typedTool[signalChannelParams, signalChannelResult]{toolSpec: toolSpec{
		name:    "signal_channel",
		toolset: Execute,
		title:   "Signal channel",
		description: "Wakes every wait_for_channel on the channel; with none waiting, the next returns at once. " +
			`Example: {"channel":"build-done"}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectChange},
			Outputs:             []Output{OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"channel": litValidated},
		},
	}, handle: (*server).signalChannel}
}

func (s *server) signalChannel(ctx context.Context, _ *mcp.CallToolRequest, in signalChannelParams) (signalChannelResult, error) {
	if err := checkChannel(in.Channel); err != nil {
		return signalChannelResult{}, err
	}
	if _, err := s.tmux.Run(ctx, "wait-for", "-S", in.Channel); err != nil {
		return signalChannelResult{}, s.fail(err)
	}
	return signalChannelResult{Channel: in.Channel, Signalled: true}, nil
}
