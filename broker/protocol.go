package broker

import "github.com/libtmux/libtmux-mcp/enroll"

// The shell line protocol: every word the broker and an enrolled zsh exchange, in one place.
// shellsetup/setup.zsh speaks the shell's side; protocol_test.go checks that it uses exactly
// these words. Lines are fields separated by one space, ending in \n. (The helper's job protocol
// is package helper/job.)
const (
	// The first line of a connection, from the shell.
	WordHello = "HELLO" // HELLO 1 <token> <$$> <$TMUX_PANE> <$TMUX>: enroll this shell
	WordSpawn = "SPAWN" // SPAWN <enrollment-id> <run_id>: this connection is the helper's fd 3

	// The broker's answer to HELLO.
	WordOK = "OK" // OK <enrollment-id>
	WordNo = "NO" // NO <reason>, one of the enroll.Reason words

	// The broker's request on the enrollment connection.
	WordRun = "RUN" // RUN <run_id>

	// The shell's answers on the enrollment connection.
	WordBusy    = "BUSY"    // BUSY <run_id>: not idle at an empty prompt; nothing will run
	WordReady   = "READY"   // a fresh prompt after BUSY
	WordStarted = "STARTED" // STARTED <run_id>: the helper was started with its SPAWN connection
	WordFail    = "FAIL"    // FAIL <run_id> <fail reason>
	WordErr     = "ERR"     // ERR bad-request: a line the shell did not understand
	WordBye     = "BYE"     // the person ran libtmux_mcp_unenroll
)

// Reasons in FAIL and ERR lines.
const (
	FailConnect   = "connect"     // the shell could not open the SPAWN connection
	FailSpawn     = "spawn"       // the shell could not start the helper
	ErrBadRequest = "bad-request" // ERR's only reason
)

// ShellWords are the words setup.zsh sends, BrokerWords those it answers to, ShellReasons the
// words that follow its FAIL and ERR, and NoReasons the words that follow the broker's NO.
var (
	ShellWords   = []string{WordHello, WordSpawn, WordBusy, WordReady, WordStarted, WordFail, WordErr, WordBye}
	BrokerWords  = []string{WordOK, WordNo, WordRun}
	ShellReasons = []string{FailConnect, FailSpawn, ErrBadRequest}
	NoReasons    = []string{enroll.ReasonExpired, enroll.ReasonUsed, enroll.ReasonWrongPane, enroll.ReasonNotPaneProcess,
		enroll.ReasonWrongServer, enroll.ReasonWrongUID, enroll.ReasonLimit}
)
