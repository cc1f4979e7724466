package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/libtmux/libtmux-mcp/broker"
)

// runAnswerCases are outcomes of every shape the contract's answer has: success exited and
// signaled, text and base64 output, and refusals with each effects state.
func runAnswerCases() []struct {
	name string
	out  broker.Outcome
} {
	receipt := &broker.Receipt{
		RunID: "0123456789abcdef0123456789abcdef", ScriptDigest: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		ServerGeneration: "srv-gen", PaneID: "%3",
		EnrollmentGeneration: "fedcba9876543210fedcba9876543210", ProcessGeneration: "00112233445566778899aabbccddeeff",
	}
	return []struct {
		name string
		out  broker.Outcome
	}{
		{"exited 0", broker.Outcome{Delivery: broker.Observed, Receipt: receipt, Completion: &broker.Completion{Status: 0}, Stdout: []byte("hi <&>\n"), Stderr: []byte{}}},
		{"exited 42 with stderr", broker.Outcome{Delivery: broker.Observed, Receipt: receipt, Completion: &broker.Completion{Status: 42}, Stderr: []byte("oops\n")}},
		{"signaled", broker.Outcome{Delivery: broker.Observed, Receipt: receipt, Completion: &broker.Completion{Signaled: true, Signal: 9}}},
		{"binary stdout", broker.Outcome{Delivery: broker.Observed, Receipt: receipt, Completion: &broker.Completion{}, Stdout: []byte{0xff, 0xfe, 'a'}}},
		{"refused before authorization", broker.Outcome{Code: broker.CodeNotEnrolled, Message: "pane %3 is not enrolled", Delivery: broker.NotSent}},
		{"refused after authorization, not sent", broker.Outcome{Code: broker.CodeShellBusy, Message: "busy", Delivery: broker.NotSent, Receipt: receipt}},
		{"possibly sent", broker.Outcome{Code: broker.CodeHelperFailed, Message: "the helper went away", Delivery: broker.PossiblySent, Receipt: receipt}},
		{"observed, end unknown", broker.Outcome{Code: broker.CodeTimedOut, Message: "timed out", Delivery: broker.Observed, Receipt: receipt}},
		{"observed, ended exited", broker.Outcome{Code: broker.CodeCancelled, Message: "cancelled", Delivery: broker.Observed, Receipt: receipt, Completion: &broker.Completion{Status: 130}}},
		{"observed, ended signaled", broker.Outcome{Code: broker.CodeTimedOut, Message: "timed out", Delivery: broker.Observed, Receipt: receipt, Completion: &broker.Completion{Signaled: true, Signal: 15}}},
	}
}

// mapRunAnswer is how tmux_run's answer was built before it had types (a map[string]any,
// whose keys encoding/json sorts): the reference the typed answer must match byte for byte.
func mapRunAnswer(req *broker.Request, out broker.Outcome) map[string]any {
	receipt := func(r *broker.Receipt) any {
		if r == nil {
			return nil
		}
		return map[string]any{
			"state": "authorized", "run_id": r.RunID, "script_digest": r.ScriptDigest,
			"server_generation": r.ServerGeneration, "pane_id": r.PaneID,
			"enrollment_generation": r.EnrollmentGeneration, "process_generation": r.ProcessGeneration,
		}
	}(out.Receipt)
	completion := func(c *broker.Completion) any {
		switch {
		case c == nil:
			return map[string]any{"state": "unobserved"}
		case c.Signaled:
			return map[string]any{"state": "signaled", "exit_status": nil, "signal": c.Signal}
		}
		return map[string]any{"state": "exited", "exit_status": c.Status, "signal": nil}
	}
	output := func(b []byte) map[string]any {
		if utf8.Valid(b) {
			return map[string]any{"encoding": "utf-8", "data": string(b), "bytes": len(b), "truncated": false}
		}
		return map[string]any{"encoding": "base64", "data": base64.StdEncoding.EncodeToString(b), "bytes": len(b), "truncated": false}
	}
	if out.Code == "" {
		return map[string]any{"ok": true, "data": map[string]any{
			"target":        map[string]any{"kind": "pane", "id": req.Pane, "generation": req.Generation},
			"authorization": receipt,
			"completion":    completion(out.Completion),
			"stdout":        output(out.Stdout),
			"stderr":        output(out.Stderr),
		}}
	}
	effects := map[string]any{"state": "none", "authorization": receipt, "completion": map[string]any{"state": "unobserved"}}
	switch {
	case out.Completion != nil:
		effects["state"] = "known"
		effects["completion"] = completion(out.Completion)
	case out.Delivery != broker.NotSent:
		effects["state"] = "unknown"
	}
	return map[string]any{"ok": false, "error": map[string]any{
		"code": string(out.Code), "message": out.Message, "delivery": string(out.Delivery), "effects": effects,
	}}
}

// TestTmuxRunAnswerMatchesTheContract: every shape of the typed answer is the text the map
// built (both encodings the server sends: the text block and structuredContent), and is valid
// against the contract's output schema.
func TestTmuxRunAnswerMatchesTheContract(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal(tmuxRunOutputSchema, &s); err != nil {
		t.Fatal(err)
	}
	schema, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve tmux_run_output.json: %v", err)
	}
	req := &broker.Request{Pane: "%3", Generation: "srv-gen"}
	for _, tc := range runAnswerCases() {
		t.Run(tc.name, func(t *testing.T) {
			typed := broker.NewAnswer(req, tc.out)
			want := mapRunAnswer(req, tc.out)
			gotText, err := encodeJSON(typed)
			if err != nil {
				t.Fatal(err)
			}
			wantText, _ := encodeJSON(want)
			if gotText != wantText {
				t.Errorf("text block:\ngot  %s\nwant %s", gotText, wantText)
			}
			gotSC, err := json.Marshal(typed) // structuredContent, as go-sdk encodes it
			if err != nil {
				t.Fatal(err)
			}
			wantSC, _ := json.Marshal(want)
			if string(gotSC) != string(wantSC) {
				t.Errorf("structuredContent:\ngot  %s\nwant %s", gotSC, wantSC)
			}
			var instance any
			if err := json.Unmarshal(gotSC, &instance); err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(instance); err != nil {
				t.Errorf("%s is not valid against tmux_run_output.json: %v", gotSC, err)
			}
		})
	}
}

// TestTmuxRunAnswerNulls: the fields the contract sends as null are present and null.
func TestTmuxRunAnswerNulls(t *testing.T) {
	req := &broker.Request{Pane: "%3", Generation: "g"}
	for _, tc := range []struct {
		name string
		out  broker.Outcome
		want string
	}{
		{"signaled: exit_status null", broker.Outcome{Delivery: broker.Observed, Completion: &broker.Completion{Signaled: true, Signal: 9}},
			`{"data":{"authorization":null,"completion":{"exit_status":null,"signal":9,"state":"signaled"},"stderr":{"bytes":0,"data":"","encoding":"utf-8","truncated":false},"stdout":{"bytes":0,"data":"","encoding":"utf-8","truncated":false},"target":{"generation":"g","id":"%3","kind":"pane"}},"ok":true}`},
		{"exited: signal null", broker.Outcome{Delivery: broker.Observed, Completion: &broker.Completion{Status: 3}},
			`{"data":{"authorization":null,"completion":{"exit_status":3,"signal":null,"state":"exited"},"stderr":{"bytes":0,"data":"","encoding":"utf-8","truncated":false},"stdout":{"bytes":0,"data":"","encoding":"utf-8","truncated":false},"target":{"generation":"g","id":"%3","kind":"pane"}},"ok":true}`},
		{"refused: authorization null, completion unobserved", broker.Outcome{Code: broker.CodeNotEnrolled, Message: "m", Delivery: broker.NotSent},
			`{"error":{"code":"not_enrolled","delivery":"not_sent","effects":{"authorization":null,"completion":{"state":"unobserved"},"state":"none"},"message":"m"},"ok":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := encodeJSON(broker.NewAnswer(req, tc.out))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
