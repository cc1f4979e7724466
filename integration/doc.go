// Package integration holds the end-to-end tests of libtmux-mcp: they build
// the real binaries (with -race when the tests run with it), start each one
// against a private tmux server, and talk to it as an MCP client over stdio,
// exactly as an agent's host would.
//
// The tests check what only the whole program can show: the tool surface a
// client sees, answers and tool errors on the wire, a stdout that carries
// nothing but JSON-RPC, the startup line on stderr, the default socket and
// its provenance, and a clean exit on stdin EOF or SIGTERM that leaves the
// tmux server running. Some speak raw JSON-RPC over pipes instead of using a
// client: hostile frames from a recorded exchange (testdata/*.exchange) and
// a whole session written before stdin closes. Others serve --http and talk
// to it with go-sdk's streamable client. The clients/ directory holds the
// npm harness that drives the binaries with other people's clients.
//
// Every test starts its own tmux server on a socket in a short temporary
// directory and points TMUX_TMPDIR at a temporary directory too, so nothing
// here touches a developer's tmux. Without tmux the tests skip, unless
// LIBTMUX_MCP_REQUIRE_INTEGRATION=1 (set by .ci/run) makes that a failure.
//
// The package has no non-test code beyond this comment.
package integration
