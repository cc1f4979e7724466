// Package helper is the process that runs tmux_run scripts for an enrolled shell.
//
// An enrolled zsh starts the helper binary (cmd/libtmux-mcp-helper) through a double fork as
// "libtmux-mcp-helper serve", with fds 0-2 on /dev/null and fd 3 a Unix stream connection to the
// broker that the shell itself opened (so the broker knows it comes from the enrolled process).
// The helper then stays resident for that enrollment: [Main] reads jobs from fd 3, one at a
// time, checks each one's BLAKE3 digest, and runs "/bin/sh -c -- SCRIPT" with stdin from /dev/null
// in a process group of its own, in the directory, environment and umask the job carries (the
// shell's at the moment it agreed to the run). It streams stdout and stderr back as separate
// records up to their limits and ends each job with exactly one final record: the exit status or
// signal it observed, an overflow, a stop, or a failure. On the broker's STOP it stops the
// script's process group (SIGTERM, then SIGKILL after a grace) and serves on; when the
// connection ends it stops the script the same way and exits. Resource limits and niceness are
// the ones the helper inherited from the shell; the broker replaces a helper whose limits no
// longer match the shell's.
//
// The wire protocol it speaks with the broker is package helper/job, which the broker imports
// without linking this package.
//
// What it does not do: it never talks to tmux, never checks who is allowed to run (enrollment and
// authorization are the broker's), never claims that descendants of the script stopped or were
// reaped, and never writes to fds 0-2 in its normal path. It links only the standard library,
// x/sys and BLAKE3 (a test enforces an allowlist; no MCP SDK, no net), so it builds static and
// starts fast. Running jobs is supported on Linux only.
package helper
