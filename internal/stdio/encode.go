package stdio

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// encode is jsonrpc.EncodeMessage, byte for byte, without its second pass
// over a successful response's result. go-sdk hands a transport a result
// its own encoder already wrote compact; EncodeMessage would scan and copy
// it again (for a 256 KiB tmux_run answer, about a quarter of the server's
// time). A result with a raw newline, which would break the framing, takes
// the general path, as does every other message.
func encode(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || !resp.ID.IsValid() || len(resp.Result) == 0 || bytes.IndexByte(resp.Result, '\n') >= 0 {
		return jsonrpc.EncodeMessage(msg)
	}
	var buf bytes.Buffer
	buf.Grow(len(resp.Result) + 64)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp.ID.Raw()); err != nil {
		return jsonrpc.EncodeMessage(msg)
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.WriteString(`,"result":`)
	buf.Write(resp.Result)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
