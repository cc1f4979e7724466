package job

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"lukechampine.com/blake3"
)

// Limits of the job protocol.
const (
	// MaxScript is the largest script, in bytes, a job may carry.
	MaxScript = 65536
	// MaxOutput is the largest stdout or stderr limit a job may ask for, in bytes.
	MaxOutput = 262144
	// DefaultOutput is the stdout and stderr limit the broker uses when the caller gives none.
	DefaultOutput = 65536
	// Unlimited as a stream's limit streams every byte and never overflows: a background run,
	// whose broker keeps a bounded head and tail of each stream itself. On the wire it is -1.
	Unlimited = -1
	// MaxChunk is the largest payload of one out or err record, in bytes.
	MaxChunk = 32 * 1024
	// MaxHeader is the longest header line in either direction, newline included.
	MaxHeader = 192
	// MaxDir is the longest working directory a job may name, in bytes (PATH_MAX).
	MaxDir = 4096
	// MaxEnv is the largest environment a job may carry, in bytes, NULs included.
	MaxEnv = 1 << 20
	// maxSignal is the highest signal number on Linux (SIGRTMAX).
	maxSignal = 64
)

// ErrMalformed is wrapped by every error that reports bytes which break the protocol, as opposed
// to I/O errors and io.EOF.
var ErrMalformed = errors.New("malformed helper protocol message")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrMalformed)
}

// Job is what the broker sends the helper to run. A resident helper runs any number of jobs,
// one at a time, each with the enrolled shell's state at the moment the shell agreed to it.
type Job struct {
	// RunID is the run's id: 32 lowercase hex digits.
	RunID string
	// Digest is the lowercase hex BLAKE3-256 of Script, as authorized by the broker ([Digest]).
	Digest string
	// StdoutLimit and StderrLimit are the most bytes each stream may carry, 0..[MaxOutput], or
	// [Unlimited]. One byte more is an overflow; 0 means any byte is one.
	StdoutLimit, StderrLimit int
	// Umask is the shell's umask, 0..0777.
	Umask int
	// Dir is the absolute working directory the script starts in, at most [MaxDir] bytes.
	Dir string
	// Env is the shell's exported environment, NAME=value entries without NUL, at most [MaxEnv]
	// bytes on the wire (each entry and its NUL terminator).
	Env []string
	// Script is the POSIX sh script: at most [MaxScript] bytes, no NUL.
	Script []byte
}

// Digest returns the lowercase hex BLAKE3-256 digest of script, as carried in [Job.Digest].
func Digest(script []byte) string {
	sum := blake3.Sum256(script)
	return hex.EncodeToString(sum[:])
}

// validate checks everything about j that the wire can carry, but not that Digest matches
// Script: the helper reports that separately, and tests must be able to send a wrong digest.
func (j Job) validate() error {
	switch {
	case !isHex(j.RunID, 32):
		return malformed("run id %q is not 32 lowercase hex digits", j.RunID)
	case !isHex(j.Digest, 64):
		return malformed("digest %q is not 64 lowercase hex digits", j.Digest)
	case !validLimit(j.StdoutLimit):
		return malformed("stdout limit %d is neither %d nor 0..%d", j.StdoutLimit, Unlimited, MaxOutput)
	case !validLimit(j.StderrLimit):
		return malformed("stderr limit %d is neither %d nor 0..%d", j.StderrLimit, Unlimited, MaxOutput)
	case j.Umask < 0 || j.Umask > 0o777:
		return malformed("umask %#o is outside 0..0777", j.Umask)
	case !strings.HasPrefix(j.Dir, "/") || len(j.Dir) > MaxDir || strings.IndexByte(j.Dir, 0) >= 0:
		return malformed("directory %q is not an absolute path of at most %d bytes without NUL", j.Dir, MaxDir)
	case envSize(j.Env) > MaxEnv:
		return malformed("environment of %d bytes is over the %d-byte limit", envSize(j.Env), MaxEnv)
	case len(j.Script) > MaxScript:
		return malformed("script of %d bytes is over the %d-byte limit", len(j.Script), MaxScript)
	case bytes.IndexByte(j.Script, 0) >= 0:
		return malformed("script contains a NUL byte")
	}
	for _, kv := range j.Env {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" || strings.IndexByte(kv, 0) >= 0 {
			return malformed("environment entry %q is not NAME=value without NUL", kv)
		}
	}
	return nil
}

// envSize is the size of env on the wire: each entry and its NUL terminator.
func envSize(env []string) int {
	n := 0
	for _, kv := range env {
		n += len(kv) + 1
	}
	return n
}

// WriteJob writes j to the helper as one JOB header line followed by the directory, the
// environment (each entry ending in NUL) and the script, in one Write. It refuses a job the
// helper would refuse as malformed and then writes nothing.
func WriteJob(w io.Writer, j Job) error {
	if err := j.validate(); err != nil {
		return fmt.Errorf("write job: %w", err)
	}
	env := envSize(j.Env)
	buf := fmt.Appendf(make([]byte, 0, MaxHeader+len(j.Dir)+env+len(j.Script)), "JOB 2 %s %s %d %d %d %d %d %d\n",
		j.RunID, j.Digest, j.StdoutLimit, j.StderrLimit, j.Umask, len(j.Dir), env, len(j.Script))
	buf = append(buf, j.Dir...)
	for _, kv := range j.Env {
		buf = append(append(buf, kv...), 0)
	}
	buf = append(buf, j.Script...)
	_, err := w.Write(buf)
	return err
}

// WriteCancel tells a helper that no run waits for it: it exits without running anything. The
// broker sends it instead of a first job.
func WriteCancel(w io.Writer) error {
	_, err := io.WriteString(w, "CANCEL\n")
	return err
}

// WriteStop tells a helper to stop the script it runs, if any. Closing the connection stops it
// too, and ends the helper.
func WriteStop(w io.Writer) error {
	_, err := io.WriteString(w, "STOP\n")
	return err
}

// MessageKind says what the broker sent.
type MessageKind int

// The broker's messages.
const (
	MessageJob    MessageKind = iota + 1 // a job to run
	MessageCancel                        // exit without running anything
	MessageStop                          // stop the script that runs
)

// ReadMessage reads one message from the broker: a job, CANCEL or STOP. Errors that are not I/O
// errors wrap [ErrMalformed]. It does not check the digest against the script.
func ReadMessage(r *bufio.Reader) (MessageKind, Job, error) {
	line, err := readLine(r)
	if err != nil {
		return 0, Job{}, err
	}
	switch line {
	case "CANCEL":
		return MessageCancel, Job{}, nil
	case "STOP":
		return MessageStop, Job{}, nil
	}
	f := strings.Split(line, " ")
	if len(f) != 10 || f[0] != "JOB" {
		return 0, Job{}, malformed("message %q is neither CANCEL, STOP nor JOB with 9 fields", line)
	}
	if f[1] != "2" {
		return 0, Job{}, malformed("job version %q is not 2", f[1])
	}
	stdoutLimit, ok1 := parseLimit(f[4])
	stderrLimit, ok2 := parseLimit(f[5])
	umask, ok3 := parseNumber(f[6], 0, 0o777)
	dirLen, ok4 := parseNumber(f[7], 1, MaxDir)
	envLen, ok5 := parseNumber(f[8], 0, MaxEnv)
	size, ok6 := parseNumber(f[9], 0, MaxScript)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return 0, Job{}, malformed("job %q: a limit, the umask or a length is out of range", line)
	}
	body := make([]byte, dirLen+envLen+size)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, Job{}, unexpectedEOF(err)
	}
	j := Job{RunID: f[2], Digest: f[3], StdoutLimit: stdoutLimit, StderrLimit: stderrLimit, Umask: umask,
		Dir: string(body[:dirLen]), Script: body[dirLen+envLen:]}
	if env := body[dirLen : dirLen+envLen]; len(env) > 0 {
		if env[len(env)-1] != 0 {
			return 0, Job{}, malformed("the environment does not end in NUL")
		}
		for _, kv := range bytes.Split(env[:len(env)-1], []byte{0}) {
			j.Env = append(j.Env, string(kv))
		}
	}
	if err := j.validate(); err != nil {
		return 0, Job{}, err
	}
	return MessageJob, j, nil
}

// Kind names a record from the helper; its value is the record's first word on the wire.
type Kind string

// The record kinds. Started comes first, then any number of Stdout and Stderr chunks, then
// exactly one final record: Exited, Signaled, Overflow, Stopped or Failed (see [Record.Final]).
// Failed may also come without Started.
const (
	KindStarted  Kind = "started"  // the script's sh started: PID and PGID
	KindStdout   Kind = "out"      // a chunk of stdout: Data
	KindStderr   Kind = "err"      // a chunk of stderr: Data
	KindExited   Kind = "exited"   // the sh exited: Status
	KindSignaled Kind = "signaled" // the sh was killed by a signal: Signal
	KindOverflow Kind = "overflow" // Stream passed its limit; the group was stopped; completion unobserved
	KindStopped  Kind = "stopped"  // STOP or EOF stopped the group before completion was observed
	KindFailed   Kind = "failed"   // the helper could not run the job: Reason
)

// Stream names used in overflow records.
const (
	StreamStdout = "stdout"
	StreamStderr = "stderr"
)

// Reasons carried by failed records.
const (
	ReasonDigestMismatch = "digest-mismatch" // BLAKE3 of the script differs from the job's digest; nothing ran
	ReasonBadJob         = "bad-job"         // the request was malformed or did not come in time; nothing ran
	ReasonSpawn          = "spawn"           // /bin/sh could not be started; nothing ran
	ReasonInternal       = "internal"        // the helper lost track of the script; completion unobserved
)

// Record is one message from the helper to the broker. Only the fields of its Kind are set.
type Record struct {
	Kind Kind
	// PID and PGID of the script's sh (started). They are equal: the sh leads its own group.
	PID, PGID int
	// Status is the exit status, 0..255 (exited).
	Status int
	// Signal is the number of the signal that killed the sh, 1..64 (signaled).
	Signal int
	// Stream is StreamStdout or StreamStderr (overflow).
	Stream string
	// Data is a chunk of output, 1..[MaxChunk] bytes (out, err).
	Data []byte
	// Reason is one of the Reason constants (failed).
	Reason string
}

// Final reports whether r ends the helper's records.
func (r Record) Final() bool {
	switch r.Kind {
	case KindExited, KindSignaled, KindOverflow, KindStopped, KindFailed:
		return true
	}
	return false
}

// header returns r's header line without its newline, or an error if r cannot be sent.
func (r Record) header() (string, error) {
	if len(r.Data) > 0 && r.Kind != KindStdout && r.Kind != KindStderr {
		return "", malformed("%s record carries data", r.Kind)
	}
	switch r.Kind {
	case KindStarted:
		if !validPID(r.PID) || !validPID(r.PGID) {
			return "", malformed("started record with pid %d, pgid %d", r.PID, r.PGID)
		}
		return fmt.Sprintf("started %d %d", r.PID, r.PGID), nil
	case KindStdout, KindStderr:
		if len(r.Data) == 0 || len(r.Data) > MaxChunk {
			return "", malformed("%s record of %d bytes is outside 1..%d", r.Kind, len(r.Data), MaxChunk)
		}
		return fmt.Sprintf("%s %d", r.Kind, len(r.Data)), nil
	case KindExited:
		if r.Status < 0 || r.Status > 255 {
			return "", malformed("exit status %d is outside 0..255", r.Status)
		}
		return fmt.Sprintf("exited %d", r.Status), nil
	case KindSignaled:
		if r.Signal < 1 || r.Signal > maxSignal {
			return "", malformed("signal %d is outside 1..%d", r.Signal, maxSignal)
		}
		return fmt.Sprintf("signaled %d", r.Signal), nil
	case KindOverflow:
		if r.Stream != StreamStdout && r.Stream != StreamStderr {
			return "", malformed("overflow of stream %q", r.Stream)
		}
		return "overflow " + r.Stream, nil
	case KindStopped:
		return "stopped", nil
	case KindFailed:
		if !validReason(r.Reason) {
			return "", malformed("failure reason %q is unknown", r.Reason)
		}
		return "failed " + r.Reason, nil
	}
	return "", malformed("record kind %q is unknown", r.Kind)
}

// WriteRecord writes r, header and data, in one Write. It refuses a record that [ReadRecord]
// would reject and then writes nothing.
func WriteRecord(w io.Writer, r Record) error {
	buf, err := AppendRecord(nil, r)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// AppendRecord appends r, header and data, to dst, for a writer that reuses its buffer. It
// refuses a record that [ReadRecord] would reject and then returns dst unchanged.
func AppendRecord(dst []byte, r Record) ([]byte, error) {
	h, err := r.header()
	if err != nil {
		return dst, fmt.Errorf("write record: %w", err)
	}
	return append(append(append(dst, h...), '\n'), r.Data...), nil
}

// ReadRecord reads one record. It returns io.EOF only at a record boundary, io.ErrUnexpectedEOF
// inside a record, and an error wrapping [ErrMalformed] for an unknown kind, a malformed or
// out-of-range number, an empty or oversized chunk, or a header over [MaxHeader] bytes.
func ReadRecord(r *bufio.Reader) (Record, error) {
	line, err := readLine(r)
	if err != nil {
		return Record{}, err
	}
	word, arg, hasArg := strings.Cut(line, " ")
	kind := Kind(word)
	bad := func(why string) (Record, error) {
		return Record{}, malformed("record %q: %s", line, why)
	}
	if kind == KindStopped {
		if hasArg {
			return bad("stopped takes no argument")
		}
		return Record{Kind: kind}, nil
	}
	if !hasArg {
		return bad("missing argument")
	}
	switch kind {
	case KindStarted:
		pid, pgid, ok := strings.Cut(arg, " ")
		p, ok1 := parseNumber(pid, 1, maxPID)
		g, ok2 := parseNumber(pgid, 1, maxPID)
		if !ok || !ok1 || !ok2 {
			return bad("want two process ids")
		}
		return Record{Kind: kind, PID: p, PGID: g}, nil
	case KindStdout, KindStderr:
		n, ok := parseNumber(arg, 1, MaxChunk)
		if !ok {
			return bad(fmt.Sprintf("chunk size must be 1..%d", MaxChunk))
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return Record{}, unexpectedEOF(err)
		}
		return Record{Kind: kind, Data: data}, nil
	case KindExited:
		n, ok := parseNumber(arg, 0, 255)
		if !ok {
			return bad("exit status must be 0..255")
		}
		return Record{Kind: kind, Status: n}, nil
	case KindSignaled:
		n, ok := parseNumber(arg, 1, maxSignal)
		if !ok {
			return bad(fmt.Sprintf("signal must be 1..%d", maxSignal))
		}
		return Record{Kind: kind, Signal: n}, nil
	case KindOverflow:
		if arg != StreamStdout && arg != StreamStderr {
			return bad("stream must be stdout or stderr")
		}
		return Record{Kind: kind, Stream: arg}, nil
	case KindFailed:
		if !validReason(arg) {
			return bad("unknown failure reason")
		}
		return Record{Kind: kind, Reason: arg}, nil
	}
	return bad("unknown kind")
}

// maxPID bounds process ids on the wire (Linux's pid_max is at most 2^22).
const maxPID = 1<<31 - 1

func validPID(n int) bool { return n >= 1 && n <= maxPID }

func validReason(s string) bool {
	switch s {
	case ReasonDigestMismatch, ReasonBadJob, ReasonSpawn, ReasonInternal:
		return true
	}
	return false
}

// readLine reads one header line and returns it without its newline. Lines longer than
// MaxHeader bytes, newline included, are malformed; io.EOF means no byte came at all.
func readLine(r *bufio.Reader) (string, error) {
	var buf [MaxHeader]byte
	n := 0
	for {
		b, err := r.ReadByte()
		if err != nil {
			if n > 0 {
				return "", unexpectedEOF(err)
			}
			return "", err
		}
		if b == '\n' {
			return string(buf[:n]), nil
		}
		if n == MaxHeader-1 {
			return "", malformed("header line %q... is longer than %d bytes", buf[:16], MaxHeader)
		}
		buf[n] = b
		n++
	}
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseNumber parses a canonical decimal number in lo..hi: digits only, no sign, no leading
// zero, so that every value has exactly one spelling on the wire.
// validLimit reports whether n is a stream limit a job may carry.
func validLimit(n int) bool { return n == Unlimited || (n >= 0 && n <= MaxOutput) }

// parseLimit parses a stream limit: "-1" ([Unlimited]) or 0..[MaxOutput].
func parseLimit(s string) (int, bool) {
	if s == "-1" {
		return Unlimited, true
	}
	return parseNumber(s, 0, MaxOutput)
}

func parseNumber(s string, lo, hi int) (int, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// ValidRunID reports whether s is a run id: 32 lowercase hex digits.
func ValidRunID(s string) bool { return isHex(s, 32) }

// isHex reports whether s is exactly n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
