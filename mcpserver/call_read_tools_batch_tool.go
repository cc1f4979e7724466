package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	batchName   = "call_read_tools_batch"
	maxBatchOps = 16
	// batchEnvelope is reserved for the answer's own fields around its rows.
	batchEnvelope = 1024
)

// batchCapNow is the byte cap of a whole batch answer: structuredContent
// plus its text copy. Tests replace it to reach the cap cheaply.
var batchCapNow = func() int { return 1_000_000 }

type batchOp struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

type batchParams struct {
	Operations []batchOp `json:"operations"`
	OnError    string    `json:"onError,omitempty" jsonschema:"stop (default) or continue"`
}

type batchRow struct {
	Index  int            `json:"index"`
	Tool   string         `json:"tool"`
	OK     bool           `json:"ok"`
	Result map[string]any `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
}

type batchResult struct {
	Results   []batchRow `json:"results"`
	Succeeded int        `json:"succeeded"`
	Failed    int        `json:"failed"`
	StoppedAt *int       `json:"stoppedAt,omitempty" jsonschema:"the row after which nothing ran"`
	Note      string     `json:"note,omitempty"`
}

// batchTool is the batch's typed tool; its capability row is the union of
// the rows of the inspect tools the selection lets it call.
type batchTool struct {
	*typedTool[batchParams, batchResult]
}

func callReadToolsBatchTool() tool {
	return &batchTool{&typedTool[batchParams, batchResult]{toolSpec: toolSpec{
		name:    batchName,
		toolset: Inspect,
		title:   "Batch of reads",
		description: "Up to 16 inspect tool calls at once; a row each, result or error. " +
			`Example: {"operations":[{"tool":"snapshot_pane","arguments":{"paneId":"%1"}}]}`,
		capability: Capability{
			ProcessReach:        ReachNone,
			Effects:             []Effect{EffectObserve},
			Outputs:             []Output{OutputConfiguredCommand, OutputProcessEnvironment, OutputTerminalContent, OutputTmuxMetadata},
			InputLiteralization: map[string]Literalization{"operations": litPerTool},
		},
	}, handle: (*server).readBatch}}
}

// serve publishes the union of the callable tools' capability rows.
func (b *batchTool) serve(s *server, mt *mcp.Tool) {
	mt.Meta = b.meta(s.sel)
	b.typedTool.serve(s, mt)
}

func (b *batchTool) meta(sel Selection) mcp.Meta {
	return mcp.Meta{CapabilityMetaKey: batchCapability(sel)}
}

func (b *batchTool) callRaw(*server, context.Context, *mcp.CallToolRequest, json.RawMessage) (any, error) {
	return nil, errors.New(batchName + " cannot run inside a batch; list its operations in one batch")
}

// batchable reports why tool name cannot run in a batch of s, or nil.
func (s *server) batchable(name string) error {
	t := catalog[name]
	switch {
	case name == batchName:
		return errors.New(batchName + " cannot run inside a batch; list its operations in one batch")
	case t == nil:
		return fmt.Errorf("no tool %q on this server; a batch runs the inspect tools that tools/list shows", name)
	case t.spec().toolset != Inspect:
		ts := t.spec().toolset
		if ts == OptIn {
			ts = "opt-in"
		}
		return fmt.Errorf("%s is not a read-only tool (toolset %s); call it directly, not in a batch", name, ts)
	case !s.sel.Has(name):
		return s.hiddenError(name)
	}
	return nil
}

func (s *server) readBatch(ctx context.Context, req *mcp.CallToolRequest, in batchParams) (batchResult, error) {
	switch {
	case len(in.Operations) == 0:
		return batchResult{}, errors.New("operations is empty; give 1 to 16 {tool, arguments}")
	case len(in.Operations) > maxBatchOps:
		return batchResult{}, fmt.Errorf("%d operations; a batch takes at most %d, so nothing ran: split it", len(in.Operations), maxBatchOps)
	}
	stop := true
	switch in.OnError {
	case "", "stop":
	case "continue":
		stop = false
	default:
		return batchResult{}, fmt.Errorf("onError %q is not stop or continue", in.OnError)
	}
	// Every operation is checked before the first runs.
	for i, op := range in.Operations {
		if err := s.batchable(op.Tool); err != nil {
			return batchResult{}, fmt.Errorf("operation %d: %w; nothing ran", i, err)
		}
	}
	capBytes := batchCapNow()
	used := batchEnvelope
	res := batchResult{Results: make([]batchRow, 0, len(in.Operations))}
	skipWhy := ""
	for i, op := range in.Operations {
		row := batchRow{Index: i, Tool: op.Tool}
		if skipWhy == "" && ctx.Err() != nil {
			skipWhy = "not run: the batch was cancelled"
		}
		if skipWhy != "" {
			row.Error = skipWhy
			res.Failed++
			res.Results = append(res.Results, row)
			continue
		}
		out, err := s.callInBatch(ctx, req, op)
		if err == nil {
			row.OK, row.Result = true, out
		} else {
			row.Error = err.Error()
		}
		n := answerBytes(row)
		if used+n > capBytes {
			row = batchRow{Index: i, Tool: op.Tool, Error: fmt.Sprintf("the batch's %d-byte answer cap stopped this row (its answer is %d bytes); read it in a batch of its own or a direct call", capBytes, n)}
			n = answerBytes(row)
			skipWhy = fmt.Sprintf("not run: the %d-byte answer cap was reached at row %d", capBytes, i)
			res.StoppedAt = &row.Index
		}
		used += n
		if row.OK {
			res.Succeeded++
		} else {
			res.Failed++
			if stop && skipWhy == "" {
				skipWhy = fmt.Sprintf("not run: row %d failed and onError is stop", i)
				res.StoppedAt = &row.Index
			}
		}
		res.Results = append(res.Results, row)
	}
	if res.StoppedAt != nil {
		res.Note = "rows after stoppedAt did not run"
	}
	return res, nil
}

// callInBatch runs one operation through its tool's own handler.
func (s *server) callInBatch(ctx context.Context, req *mcp.CallToolRequest, op batchOp) (map[string]any, error) {
	args, err := json.Marshal(op.Arguments)
	if err != nil {
		return nil, err
	}
	if op.Arguments == nil {
		args = []byte("{}")
	}
	out, err := catalog[op.Tool].callRaw(s, ctx, req, args)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode the %s answer: %w", op.Tool, err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("the %s answer is not an object: %w", op.Tool, err)
	}
	return m, nil
}

// answerBytes is what row adds to the answer: once in structuredContent
// (json.Marshal escapes <, > and &) and once in the text copy (which does
// not), plus a separator each.
func answerBytes(row batchRow) int {
	structured, _ := json.Marshal(row)
	text, _ := encodeJSON(row)
	return len(structured) + len(text) + 2
}
