package broker

import "github.com/libtmux/libtmux-mcp/enroll"

// The shell line protocol: every word the broker and an enrolled zsh exchange, in one place.
// shellsetup/setup.zsh speaks the shell's side (its header shows the whole exchange);
// protocol_test.go checks that it uses exactly these words. Lines are fields separated by one
// space, ending in \n. (The helper's job protocol is package helper/job.)
const (
	// The first line of a connection, from the shell.
	WordHello  = "HELLO"  // HELLO 1 <token> <$$> <$TMUX_PANE> <$TMUX>: enroll this shell
	WordAttach = "ATTACH" // ATTACH <enrollment-id>: a prompt is shown; this connection serves it
	WordSpawn  = "SPAWN"  // SPAWN <enrollment-id> <run_id>: this connection is a new helper's fd 3
	WordState  = "STATE"  // STATE <enrollment-id> <run_id> <n>, then n bytes: $PWD NUL NAME=value NUL ...
	WordBye    = "BYE"    // BYE <enrollment-id>: the person ran libtmux_mcp_unenroll

	// The broker's answer to HELLO.
	WordOK = "OK" // OK <enrollment-id>
	WordNo = "NO" // NO <reason>, one of NoReasons

	// The broker's requests on a prompt connection.
	WordRun    = "RUN"    // RUN <run_id>: may a run start now?
	WordHelper = "HELPER" // HELPER <run_id>: the same, after starting a resident helper

	// The shell's answers on a prompt connection.
	WordGo   = "GO"   // GO <run_id>: the run may start; its STATE connection came before
	WordBusy = "BUSY" // BUSY <run_id>: not idle at an empty prompt; nothing will run
	WordFail = "FAIL" // FAIL <run_id> <reason>, one of ShellReasons
	WordErr  = "ERR"  // ERR bad-request: a line the shell did not understand
)

// Reasons in FAIL and ERR lines.
const (
	FailConnect   = "connect"     // the shell could not open the SPAWN or STATE connection
	FailSpawn     = "spawn"       // the shell could not start the helper
	ErrBadRequest = "bad-request" // ERR's only reason
)

// ShellWords are the words setup.zsh sends, BrokerWords those it answers to, ShellReasons the
// words that follow its FAIL and ERR, and NoReasons the words that follow the broker's NO.
var (
	ShellWords   = []string{WordHello, WordAttach, WordSpawn, WordState, WordBye, WordGo, WordBusy, WordFail, WordErr}
	BrokerWords  = []string{WordOK, WordNo, WordRun, WordHelper}
	ShellReasons = []string{FailConnect, FailSpawn, ErrBadRequest}
	NoReasons    = []string{enroll.ReasonExpired, enroll.ReasonUsed, enroll.ReasonWrongPane, enroll.ReasonNotPaneProcess,
		enroll.ReasonWrongServer, enroll.ReasonWrongUID, enroll.ReasonLimit, enroll.ReasonAgentInput}
)

// livePrefix names the liveness FIFO of an enrollment in the broker's directory:
// live-<enrollment-id>. The shell derives the same name from its socket path.
const livePrefix = "live-"
