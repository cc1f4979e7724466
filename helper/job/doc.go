// Package job is the wire protocol between the broker and the helper: the job the broker sends
// (script, BLAKE3 digest, output limits), the CANCEL and STOP lines, and the records the helper
// answers with (started, out, err, and one final record), with their limits.
//
// It is the protocol's one home: the broker and the MCP server import it for the codec and the
// limits, and so never link the code that runs scripts (package helper). It reads and writes
// bytes only; it starts no process and checks no identity.
package job
