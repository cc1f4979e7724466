package mcpserver

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/broker"
)

// runAnswer renders an outcome as the contract's answer: ok:true with the
// data (echoing req's target), or ok:false with error{code, message,
// delivery, effects}. Only a parsed request can succeed.
func runAnswer(req *broker.Request, out broker.Outcome) map[string]any {
	receipt := receiptJSON(out.Receipt)
	if out.Code == "" {
		return map[string]any{"ok": true, "data": map[string]any{
			"target":        map[string]any{"kind": "pane", "id": req.Pane, "generation": req.Generation},
			"authorization": receipt,
			"completion":    completionJSON(out.Completion),
			"stdout":        outputJSON(out.Stdout),
			"stderr":        outputJSON(out.Stderr),
		}}
	}
	effects := map[string]any{"state": "none", "authorization": receipt, "completion": map[string]any{"state": "unobserved"}}
	switch {
	case out.Completion != nil:
		effects["state"] = "known"
		effects["completion"] = completionJSON(out.Completion)
	case out.Delivery != broker.NotSent:
		effects["state"] = "unknown"
	}
	return map[string]any{"ok": false, "error": map[string]any{
		"code": out.Code, "message": out.Message, "delivery": out.Delivery, "effects": effects,
	}}
}

func receiptJSON(r *broker.Receipt) any {
	if r == nil {
		return nil
	}
	return map[string]any{
		"state": "authorized", "run_id": r.RunID, "script_digest": r.ScriptDigest,
		"server_generation": r.ServerGeneration, "pane_id": r.PaneID,
		"enrollment_generation": r.EnrollmentGeneration, "process_generation": r.ProcessGeneration,
	}
}

func completionJSON(c *broker.Completion) any {
	switch {
	case c == nil:
		return map[string]any{"state": "unobserved"}
	case c.Signaled:
		return map[string]any{"state": "signaled", "exit_status": nil, "signal": c.Signal}
	}
	return map[string]any{"state": "exited", "exit_status": c.Status, "signal": nil}
}

// outputJSON is UTF-8 text when the bytes are valid UTF-8, else base64.
func outputJSON(b []byte) map[string]any {
	if utf8.Valid(b) {
		return map[string]any{"encoding": "utf-8", "data": string(b), "bytes": len(b), "truncated": false}
	}
	return map[string]any{"encoding": "base64", "data": base64.StdEncoding.EncodeToString(b), "bytes": len(b), "truncated": false}
}
