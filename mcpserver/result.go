package mcpserver

import (
	"bytes"
	"encoding/json"
)

// encodeJSON renders v as the text copy of a structured answer. HTML
// escaping is off: terminal text keeps <, > and & as they are.
func encodeJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}
