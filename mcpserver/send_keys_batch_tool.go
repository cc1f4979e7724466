package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type sendKeysBatchParams struct {
	Rows  []keyInput `json:"rows"`
	Force string     `json:"force,omitempty"`
}

type sendKeysBatchResult struct {
	Rows []sendKeysResult `json:"rows"`
}

func sendKeysBatchTool() tool {
	return &typedTool[sendKeysBatchParams, sendKeysBatchResult]{toolSpec: toolSpec{
		name:    "send_keys_batch",
		toolset: Execute,
		title:   "Send keys in order",
		description: "Up to 32 send_keys rows in order, all validated first; a refusal stops it and says which rows were sent. " +
			`Example: {"rows":[{"paneId":"%3","text":":wq","enter":true}]}`,
		capability: inputCapability,
	}, handle: (*server).sendKeysBatch}
}

func (s *server) sendKeysBatch(ctx context.Context, _ *mcp.CallToolRequest, in sendKeysBatchParams) (sendKeysBatchResult, error) {
	switch n := len(in.Rows); {
	case n == 0:
		return sendKeysBatchResult{}, fmt.Errorf("rows is empty; give 1 to %d rows", maxBatchRows)
	case n > maxBatchRows:
		return sendKeysBatchResult{}, fmt.Errorf("%d rows; at most %d per call, so split the batch", n, maxBatchRows)
	}
	args := make([][]string, len(in.Rows))
	total := 0
	for i, row := range in.Rows {
		a, size, err := row.args()
		if err != nil {
			return sendKeysBatchResult{}, fmt.Errorf("row %d: %w; nothing was sent", i, err)
		}
		args[i], total = a, total+size
	}
	if total > maxBatchSize {
		return sendKeysBatchResult{}, fmt.Errorf("the rows hold %d bytes of keys and text; the limit is %d, so split the batch; nothing was sent", total, maxBatchSize)
	}
	res := sendKeysBatchResult{Rows: []sendKeysResult{}}
	for i, row := range in.Rows {
		// A fresh check per row: an earlier row's check authorizes nothing
		// later (the earlier input may itself have changed the pane).
		c, err := s.protect(ctx, "pane", row.PaneID, in.Force, forInput)
		var prompts map[string]bool
		if err == nil {
			end := s.inputTo(c.cohort...)
			prompts = s.atPrompts(c)
			err = s.send(ctx, row, args[i])
			end()
		}
		if err != nil {
			return sendKeysBatchResult{}, fmt.Errorf("row %d: %w; %s", i, err, sentRows(i, len(in.Rows)))
		}
		s.noteTypedAll(c.cohort, row.Text)
		s.noteUnentered(c.cohort, row, false, prompts)
		res.Rows = append(res.Rows, sendKeysResult{PaneID: row.PaneID, Cohort: c.cohort})
	}
	return res, nil
}

// sentRows says which of n rows were sent when row i stopped the batch.
func sentRows(i, n int) string {
	span := func(a, b int) string {
		if a == b {
			return fmt.Sprintf("row %d", a)
		}
		return fmt.Sprintf("rows %d to %d", a, b)
	}
	if i == 0 {
		return "nothing was sent"
	}
	return fmt.Sprintf("%s sent, %s not", span(0, i-1), span(i, n-1))
}
