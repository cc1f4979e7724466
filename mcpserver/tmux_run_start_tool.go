package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/libtmux/libtmux-mcp/broker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tmuxRunStartOutputSchema is the shape of tmux_run_start's answer: ok:true with data {handle,
// target, authorization}, or ok:false with tmux_run's error.
var tmuxRunStartOutputSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"},"data":{"type":"object","properties":{"handle":{"type":"string"}}},"error":{"type":"object"}},"required":["ok"]}`)

func tmuxRunStartTool() tool {
	return &rawTool{toolSpec: toolSpec{
		name:    "tmux_run_start",
		toolset: OptIn,
		title:   "Start in an enrolled shell",
		description: "As tmux_run, but answers once the script started, with a handle: the run goes on in a helper of its own while the shell stays free. " +
			"Collect with wait_for_run (stdout and stderr apart, head and tail of any size), stop with cancel_run, find with list_runs. " +
			`Example: {"target":{"kind":"pane","id":"%3","generation":"<serverGeneration>"},"script":"make test"}`,
		annotations:  enrolledShellAnnotations("Start in an enrolled shell"),
		capability:   enrolledShellRun,
		inputSchema:  tmuxRunInputSchema,
		outputSchema: tmuxRunStartOutputSchema,
	}, handle: (*server).tmuxRunStart}
}

// runStarted is tmux_run_start's data.
type runStarted struct {
	Authorization *broker.AnswerReceipt `json:"authorization"`
	Handle        string                `json:"handle"`
	Target        broker.AnswerTarget   `json:"target"`
}

type runStartAnswer struct {
	Data  *runStarted         `json:"data,omitempty"`
	Error *broker.AnswerError `json:"error,omitempty"`
	OK    bool                `json:"ok"`
}

func (s *server) tmuxRunStart(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	breq, out := s.parseTmuxRun(req.Params.Arguments)
	handle := ""
	if breq != nil {
		if s.runner == nil {
			out = broker.Outcome{Code: broker.CodeBrokerUnavailable, Message: "the tmux_run broker is not running", Delivery: broker.NotSent}
		} else {
			out, handle = s.runner.Start(ctx, *breq)
		}
		out.Message = s.runNextStep(ctx, breq.Pane, out)
	}
	var answer runStartAnswer
	if out.Code == "" {
		answer = runStartAnswer{OK: true, Data: &runStarted{
			Handle:        handle,
			Target:        broker.AnswerTarget{Kind: "pane", ID: breq.Pane, Generation: breq.Generation},
			Authorization: broker.NewAnswerReceipt(out.Receipt),
		}}
	} else {
		answer.Error = broker.NewAnswer(breq, out).Error
	}
	text, err := encodeJSON(answer)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: answer,
		IsError:           out.Code != "",
	}, nil
}
