// Package helper is the process that runs tmux_run scripts for an enrolled shell.
//
// An enrolled zsh starts the helper binary (cmd/libtmux-mcp-helper) through a double fork as
// "libtmux-mcp-helper job RUN_ID", with fds 0-2 on /dev/null and fd 3 a Unix stream connection to
// the broker. [Main] reads one job from fd 3, checks its run id and BLAKE3 digest, runs
// "/bin/sh -c SCRIPT" with stdin from /dev/null in a process group of its own, streams stdout and
// stderr back as separate records up to their limits, and ends with exactly one final record: the
// exit status or signal it observed, an overflow, a stop, or a failure. On the broker's STOP, or
// when the connection ends, it stops the script's process group (SIGTERM, then SIGKILL after a
// grace).
//
// The wire protocol it speaks with the broker is package helper/job, which the broker imports
// without linking this package.
//
// What it does not do: it never talks to tmux, never checks who is allowed to run (enrollment and
// authorization are the broker's), never claims that descendants of the script stopped or were
// reaped, and never writes to fds 0-2 in its normal path. It must not import the MCP SDK (a test
// enforces this), so the helper binary stays small. Running jobs is supported on Linux only; the
// codec builds everywhere.
package helper
