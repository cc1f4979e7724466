package broker

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
	"github.com/libtmux/libtmux-mcp/helper/job"
)

// Why a run's state (the shell's directory and environment, which the script gets) comes on a
// connection of its own, and not on the prompt's connection with the shell's GO:
//
// Every byte on a shell's connections is checked to come from the shell's own process, by the
// credentials the kernel attaches to each write (SO_PASSCRED; see onlyFrom). Root may attach
// credentials that name any process (SCM_CREDENTIALS), so as root a process that inherited the
// prompt's connection (a command substitution of a redrawn prompt, a widget's child) could
// answer a run for the shell with a directory and environment of its own, LD_PRELOAD included.
// A connection's own credentials (SO_PEERCRED, SO_PEERPIDFD) are another matter: the kernel
// records them when connect(2) is called, from the process that calls it, and no one can choose
// them. The shell opens a new connection for each run's state and closes it at once; the broker
// takes a state only from a connection the enrolled process itself opened (isEnrolledProcess),
// and only for the run it asked about. A GO on the prompt's connection then only says "start
// now", after the state: a forged one makes the broker wait for a state that never comes.
//
// What this does not stop is stated in docs/boundary.md: a process allowed to trace the shell
// (root, or the same user where ptrace is allowed) can act inside it.

// maxState bounds a state's payload: the directory, a NUL and the environment.
const maxState = job.MaxDir + 1 + job.MaxEnv

// state takes the state of a run the shell agreed to, from a STATE connection: accepted only
// when the process that opened the connection is the enrolled shell of the run's enrollment and
// the run is waiting for it.
func (b *Broker) state(conn *net.UnixConn, r *bufio.Reader, peer peercred.Peer, eid, runID, size string) {
	peer.Close()
	defer conn.Close()
	n, err := strconv.Atoi(size)
	if err != nil || n < 1 || n > maxState {
		b.cfg.Log.Warn("tmux_run refused a STATE of a length out of range", slog.String("length", size))
		return
	}
	b.mu.Lock()
	rn := b.runs[runID]
	b.mu.Unlock()
	if rn == nil || rn.e.ID != eid || !b.isEnrolledProcess(rn.e, peer) {
		b.cfg.Log.Warn("tmux_run refused a run's state from a process that is not the enrolled shell waiting for it (or for a run nobody waits for)",
			slog.Int("pid", peer.PID), slog.String("run_id", runID))
		return
	}
	payload := make([]byte, n)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(r, payload); err != nil {
		b.logForeign(err, rn.e.Pane)
		return
	}
	rep := reply{word: WordState, id: runID}
	rep.dir, rep.env = parseStatePayload(payload)
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case rn.state <- rep:
	default: // a second state for the run: the first stands
	}
}

// parseStatePayload splits a STATE payload: $PWD NUL NAME=value NUL ...
func parseStatePayload(payload []byte) (dir string, env []string) {
	d, rest, _ := bytes.Cut(payload, []byte{0})
	if len(rest) > 0 {
		for _, kv := range bytes.Split(rest, []byte{0}) {
			env = append(env, string(kv))
		}
	}
	return string(d), env
}
