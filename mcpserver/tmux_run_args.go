package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// tmuxRunExample is the shape of tmux_run's arguments, for messages.
const tmuxRunExample = `{"target":{"kind":"pane","id":"%3","generation":"<serverGeneration from list_panes>"},"script":"make test"}`

// argShapeError is an argument of the wrong shape, said in the model's
// terms: which argument, what it must be, what it was. target says whether
// it is the target's (invalid_target) or another's (invalid_script).
type argShapeError struct {
	target bool
	msg    string
}

// decodeTmuxRunArgs reads tmux_run's arguments member by member, so that
// every mistake names the argument and its expected shape, never a
// decoder's words.
func decodeTmuxRunArgs(raw json.RawMessage) (tmuxRunArgs, *argShapeError) {
	var args tmuxRunArgs
	top, err := object(raw, "tmux_run's arguments object", []string{"target", "script", "stdout_limit", "stderr_limit"}, false)
	if err != nil {
		return args, err
	}
	if t, ok := top["target"]; ok {
		fields, err := object(t, "target", []string{"kind", "id", "generation"}, true)
		if err != nil {
			return args, err
		}
		for name, dst := range map[string]*string{"kind": &args.Target.Kind, "id": &args.Target.ID, "generation": &args.Target.Generation} {
			if v, ok := fields[name]; ok && json.Unmarshal(v, dst) != nil {
				return args, &argShapeError{true, fmt.Sprintf("target.%s must be a string, not %s; expected %s", name, jsonType(v), tmuxRunExample)}
			}
		}
	}
	if v, ok := top["script"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return args, &argShapeError{false, fmt.Sprintf("script must be a string (a POSIX sh script), not %s; expected %s", jsonType(v), tmuxRunExample)}
		}
		args.Script = &s
	}
	for name, dst := range map[string]**int{"stdout_limit": &args.StdoutLimit, "stderr_limit": &args.StderrLimit} {
		if v, ok := top[name]; ok {
			var n int
			if json.Unmarshal(v, &n) != nil {
				return args, &argShapeError{false, fmt.Sprintf("%s must be an integer number of bytes, not %s; omit it for the default", name, jsonType(v))}
			}
			*dst = &n
		}
	}
	return args, nil
}

// object reads raw as a JSON object whose members are among names.
func object(raw json.RawMessage, what string, names []string, isTarget bool) (map[string]json.RawMessage, *argShapeError) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, &argShapeError{isTarget, fmt.Sprintf("%s must be an object, not %s; expected %s", what, jsonType(raw), tmuxRunExample)}
	}
	for k := range m {
		if !slices.Contains(names, k) {
			return nil, &argShapeError{isTarget, fmt.Sprintf("%s has no member %q: its members are %s; expected %s", what, shortQuote(k), strings.Join(names, ", "), tmuxRunExample)}
		}
	}
	return m, nil
}

// jsonType names the kind of a JSON value, for messages.
func jsonType(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "":
		return "nothing"
	case s[0] == '{':
		return "an object"
	case s[0] == '[':
		return "an array"
	case s[0] == '"':
		return "a string"
	case s == "true" || s == "false":
		return "a boolean"
	case s == "null":
		return "null"
	}
	return "a number"
}
