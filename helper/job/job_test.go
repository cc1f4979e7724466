package job_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/libtmux/libtmux-mcp/helper/job"
)

const testRunID = "0123456789abcdef0123456789abcdef"

func reader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

func TestDigest(t *testing.T) {
	// BLAKE3-256 of the empty input, from the BLAKE3 specification's test vectors.
	const want = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	if got := job.Digest(nil); got != want {
		t.Errorf("Digest(nil) = %q; want %q", got, want)
	}
}

func testJob(script string) job.Job {
	return job.Job{RunID: testRunID, Digest: job.Digest([]byte(script)), StdoutLimit: 1, StderrLimit: 1,
		Umask: 0o22, Dir: "/tmp", Env: []string{"A=1"}, Script: []byte(script)}
}

func TestJobRoundTrip(t *testing.T) {
	tests := []job.Job{
		{RunID: testRunID, StdoutLimit: job.DefaultOutput, StderrLimit: job.DefaultOutput, Umask: 0o22, Dir: "/", Script: []byte("echo hi\n")},
		{RunID: testRunID, StdoutLimit: 0, StderrLimit: job.MaxOutput, Umask: 0o777, Dir: "/a dir/with\nnewline",
			Env: []string{"PATH=/bin", "EMPTY=", "MULTI=a\nb=c"}, Script: []byte{}},
		{RunID: testRunID, StdoutLimit: job.MaxOutput, StderrLimit: 0, Dir: "/" + strings.Repeat("d", job.MaxDir-1),
			Env: []string{"BIG=" + strings.Repeat("v", job.MaxEnv-5)}, Script: bytes.Repeat([]byte{'\n', 0xff}, job.MaxScript/2)},
		{RunID: testRunID, StdoutLimit: job.Unlimited, StderrLimit: job.Unlimited, Dir: "/", Script: []byte("yes | head -c 20000000")},
	}
	for _, jb := range tests {
		jb.Digest = job.Digest(jb.Script)
		var buf bytes.Buffer
		if err := job.WriteJob(&buf, jb); err != nil {
			t.Fatalf("WriteJob: %v", err)
		}
		buf.WriteString("STOP\n")
		r := bufio.NewReader(&buf)
		kind, got, err := job.ReadMessage(r)
		if err != nil || kind != job.MessageJob {
			t.Fatalf("ReadMessage = %v, _, %v; want a job", kind, err)
		}
		if diff := cmp.Diff(jb, got); diff != "" {
			t.Errorf("job round trip (-sent +read):\n%s", diff)
		}
		if kind, _, err := job.ReadMessage(r); kind != job.MessageStop || err != nil {
			t.Errorf("after the job: %v, %v; want STOP", kind, err)
		}
	}
}

func TestCancelAndStop(t *testing.T) {
	var buf bytes.Buffer
	if err := job.WriteCancel(&buf); err != nil {
		t.Fatal(err)
	}
	if err := job.WriteStop(&buf); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(&buf)
	for _, want := range []job.MessageKind{job.MessageCancel, job.MessageStop} {
		if kind, _, err := job.ReadMessage(r); kind != want || err != nil {
			t.Errorf("ReadMessage = %v, %v; want %v", kind, err, want)
		}
	}
}

func TestReadMessageRejects(t *testing.T) {
	digest := job.Digest([]byte("x"))
	// jobLine is a JOB 2 header for a one-byte script in / with no environment, with fields
	// replaced as given (index 0 is the version).
	jobLine := func(edit func(f []string) []string) string {
		f := []string{"2", testRunID, digest, "1", "1", "18", "1", "0", "1"}
		return "JOB " + strings.Join(edit(f), " ") + "\n"
	}
	same := func(f []string) []string { return f }
	set := func(i int, v string) func([]string) []string {
		return func(f []string) []string { f[i] = v; return f }
	}
	tests := []struct {
		name, in string
		want     error
	}{
		{"a good job", jobLine(same) + "/x", nil},
		{"empty input is EOF", "", io.EOF},
		{"CANCEL takes no argument", "CANCEL now\n", job.ErrMalformed},
		{"lowercase verb", strings.ToLower(jobLine(same)) + "/x", job.ErrMalformed},
		{"version 1", jobLine(set(0, "1")) + "/x", job.ErrMalformed},
		{"run id has uppercase", jobLine(set(1, strings.ToUpper(testRunID))) + "/x", job.ErrMalformed},
		{"run id too short", jobLine(set(1, testRunID[1:])) + "/x", job.ErrMalformed},
		{"digest has uppercase", jobLine(set(2, strings.ToUpper(digest))) + "/x", job.ErrMalformed},
		{"stdout limit over the ceiling", jobLine(set(3, "262145")) + "/x", job.ErrMalformed},
		{"negative stderr limit other than unlimited", jobLine(set(4, "-2")) + "/x", job.ErrMalformed},
		{"umask over 0777", jobLine(set(5, "512")) + "/x", job.ErrMalformed},
		{"empty directory", jobLine(set(6, "0")) + "x", job.ErrMalformed},
		{"relative directory", jobLine(same) + "xx", job.ErrMalformed},
		{"script over the limit", jobLine(set(8, "65537")), job.ErrMalformed},
		{"leading zero", jobLine(set(3, "01")) + "/x", job.ErrMalformed},
		{"missing field", jobLine(func(f []string) []string { return f[:8] }) + "/x", job.ErrMalformed},
		{"extra field", jobLine(func(f []string) []string { return append(f, "1") }) + "/x", job.ErrMalformed},
		{"double space", strings.Replace(jobLine(same), " ", "  ", 1) + "/x", job.ErrMalformed},
		{"environment without its NUL", jobLine(set(7, "3")) + "/A=1x", job.ErrMalformed},
		{"environment entry without =", jobLine(set(7, "2")) + "/A\x00x", job.ErrMalformed},
		{"environment entry with no name", jobLine(set(7, "3")) + "/=1\x00x", job.ErrMalformed},
		{"NUL in script", jobLine(set(8, "3")) + "/a\x00b", job.ErrMalformed},
		{"script cut short", jobLine(set(8, "3")) + "/ab", io.ErrUnexpectedEOF},
		{"header without newline", "CANCEL", io.ErrUnexpectedEOF},
		{"header over the limit", "JOB " + strings.Repeat("1", 200) + "\n", job.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := job.ReadMessage(reader(tt.in))
			if !errors.Is(err, tt.want) && !(tt.want == nil && err == nil) {
				t.Errorf("ReadMessage(%q) = %v; want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestWriteJobRefuses(t *testing.T) {
	ok := testJob("")
	tests := []struct {
		name string
		edit func(*job.Job)
	}{
		{"short run id", func(j *job.Job) { j.RunID = "abc" }},
		{"digest not hex", func(j *job.Job) { j.Digest = strings.Repeat("g", 64) }},
		{"stdout limit over the ceiling", func(j *job.Job) { j.StdoutLimit = job.MaxOutput + 1 }},
		{"negative stderr limit other than unlimited", func(j *job.Job) { j.StderrLimit = -2 }},
		{"umask over 0777", func(j *job.Job) { j.Umask = 0o1000 }},
		{"relative directory", func(j *job.Job) { j.Dir = "tmp" }},
		{"directory too long", func(j *job.Job) { j.Dir = "/" + strings.Repeat("d", job.MaxDir) }},
		{"environment too large", func(j *job.Job) { j.Env = []string{"A=" + strings.Repeat("v", job.MaxEnv)} }},
		{"environment entry with NUL", func(j *job.Job) { j.Env = []string{"A=\x00"} }},
		{"environment entry without =", func(j *job.Job) { j.Env = []string{"A"} }},
		{"script over the limit", func(j *job.Job) { j.Script = make([]byte, job.MaxScript+1) }},
		{"NUL in script", func(j *job.Job) { j.Script = []byte("a\x00") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jb := ok
			tt.edit(&jb)
			var buf bytes.Buffer
			if err := job.WriteJob(&buf, jb); !errors.Is(err, job.ErrMalformed) || buf.Len() != 0 {
				t.Errorf("WriteJob = %v, wrote %d bytes; want ErrMalformed and nothing written", err, buf.Len())
			}
		})
	}
}

// allRecords has one record of every kind, and the extremes of every number.
var allRecords = []job.Record{
	{Kind: job.KindStarted, PID: 1234, PGID: 1234},
	{Kind: job.KindStarted, PID: 1, PGID: 1<<31 - 1},
	{Kind: job.KindStdout, Data: []byte("out\n")},
	{Kind: job.KindStderr, Data: []byte{0}},
	{Kind: job.KindStdout, Data: bytes.Repeat([]byte{0xff, '\n'}, job.MaxChunk/2)},
	{Kind: job.KindExited, Status: 0},
	{Kind: job.KindExited, Status: 255},
	{Kind: job.KindSignaled, Signal: 1},
	{Kind: job.KindSignaled, Signal: 64},
	{Kind: job.KindOverflow, Stream: job.StreamStdout},
	{Kind: job.KindOverflow, Stream: job.StreamStderr},
	{Kind: job.KindStopped},
	{Kind: job.KindFailed, Reason: job.ReasonDigestMismatch},
	{Kind: job.KindFailed, Reason: job.ReasonBadJob},
	{Kind: job.KindFailed, Reason: job.ReasonSpawn},
	{Kind: job.KindFailed, Reason: job.ReasonInternal},
}

func TestRecordRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	for _, rec := range allRecords {
		if err := job.WriteRecord(&buf, rec); err != nil {
			t.Fatalf("WriteRecord(%+v): %v", rec, err)
		}
	}
	r := bufio.NewReader(&buf)
	var got []job.Record
	for {
		rec, err := job.ReadRecord(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("ReadRecord after %d records: %v", len(got), err)
		}
		got = append(got, rec)
	}
	if diff := cmp.Diff(allRecords, got); diff != "" {
		t.Errorf("records round trip (-written +read):\n%s", diff)
	}
}

func TestRecordFinal(t *testing.T) {
	for _, rec := range allRecords {
		want := rec.Kind != job.KindStarted && rec.Kind != job.KindStdout && rec.Kind != job.KindStderr
		if got := rec.Final(); got != want {
			t.Errorf("%s record: Final() = %v; want %v", rec.Kind, got, want)
		}
	}
}

func TestReadRecordRejects(t *testing.T) {
	tests := []struct {
		in, why string
		want    error
	}{
		{"", "no record at all is a clean EOF", io.EOF},
		{"\n", "an empty line has no kind", job.ErrMalformed},
		{"hello 1\n", "unknown kind", job.ErrMalformed},
		{"Exited 0\n", "kinds are lowercase", job.ErrMalformed},
		{" exited 0\n", "leading space", job.ErrMalformed},
		{"exited 0 \n", "trailing space", job.ErrMalformed},
		{"exited 0\r\n", "CR is not part of a number", job.ErrMalformed},
		{"exited\n", "exited needs a status", job.ErrMalformed},
		{"exited 256\n", "statuses are 0..255", job.ErrMalformed},
		{"exited -1\n", "no sign", job.ErrMalformed},
		{"exited +1\n", "no sign", job.ErrMalformed},
		{"exited 01\n", "no leading zero", job.ErrMalformed},
		{"exited 1e2\n", "digits only", job.ErrMalformed},
		{"exited 0x1\n", "digits only", job.ErrMalformed},
		{"exited 1 2\n", "one argument", job.ErrMalformed},
		{"exited 99999999999999999999\n", "overlong number", job.ErrMalformed},
		{"signaled 0\n", "signal 0 kills nothing", job.ErrMalformed},
		{"signaled 65\n", "signals are 1..64", job.ErrMalformed},
		{"started 1\n", "started needs a pid and a pgid", job.ErrMalformed},
		{"started 0 1\n", "pid 0 is not a process", job.ErrMalformed},
		{"started 1  1\n", "double space", job.ErrMalformed},
		{"started 1 2 3\n", "three numbers", job.ErrMalformed},
		{"started 1 2147483648\n", "pgid over 2^31-1", job.ErrMalformed},
		{"out 0\n", "an empty chunk is never sent", job.ErrMalformed},
		{"out 32769\n", "chunks are at most 32 KiB", job.ErrMalformed},
		{"err\n", "err needs a size", job.ErrMalformed},
		{"out 5\nabc", "chunk cut short", io.ErrUnexpectedEOF},
		{"overflow stdin\n", "only stdout and stderr overflow", job.ErrMalformed},
		{"overflow\n", "overflow names its stream", job.ErrMalformed},
		{"stopped now\n", "stopped takes no argument", job.ErrMalformed},
		{"stopped \n", "stopped takes no argument, not even an empty one", job.ErrMalformed},
		{"failed oops\n", "unknown failure reason", job.ErrMalformed},
		{"failed\n", "failed names its reason", job.ErrMalformed},
		{"exited 0", "header without newline", io.ErrUnexpectedEOF},
		{"failed " + strings.Repeat("x", 121) + "\n", "129-byte header", job.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			rec, err := job.ReadRecord(reader(tt.in))
			if !errors.Is(err, tt.want) {
				t.Errorf("ReadRecord(%q) = %+v, %v; want %v (%s)", tt.in, rec, err, tt.want, tt.why)
			}
		})
	}
}

func TestHeaderLimitIncludesNewline(t *testing.T) {
	// A MaxHeader-1 byte line plus its newline is the longest header; the reason does not matter
	// here, only that the line is read whole and judged on its content.
	line := "failed " + strings.Repeat("x", job.MaxHeader-8) + "\n"
	if len(line) != job.MaxHeader {
		t.Fatalf("test line is %d bytes; want %d", len(line), job.MaxHeader)
	}
	_, err := job.ReadRecord(reader(line))
	if !errors.Is(err, job.ErrMalformed) || !strings.Contains(err.Error(), "unknown failure reason") {
		t.Errorf("ReadRecord(MaxHeader-byte line) = %v; want it read whole and refused for its reason", err)
	}
}

func TestWriteRecordRefuses(t *testing.T) {
	tests := []struct {
		rec job.Record
		why string
	}{
		{job.Record{Kind: "hello"}, "unknown kind"},
		{job.Record{}, "no kind"},
		{job.Record{Kind: job.KindStdout}, "empty chunk"},
		{job.Record{Kind: job.KindStderr, Data: make([]byte, job.MaxChunk+1)}, "chunk over 32 KiB"},
		{job.Record{Kind: job.KindExited, Status: 256}, "status over 255"},
		{job.Record{Kind: job.KindExited, Status: 0, Data: []byte("x")}, "data on a final record"},
		{job.Record{Kind: job.KindSignaled}, "signal 0"},
		{job.Record{Kind: job.KindStarted, PID: 1}, "pgid 0"},
		{job.Record{Kind: job.KindOverflow, Stream: "stdin"}, "unknown stream"},
		{job.Record{Kind: job.KindFailed, Reason: "oops"}, "unknown reason"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := job.WriteRecord(&buf, tt.rec); !errors.Is(err, job.ErrMalformed) || buf.Len() != 0 {
			t.Errorf("WriteRecord(%+v) = %v, wrote %d bytes; want ErrMalformed and nothing written (%s)", tt.rec, err, buf.Len(), tt.why)
		}
	}
}

// FuzzReadRecord checks that ReadRecord never panics, and that every record it accepts can be
// written back and reads the same.
func FuzzReadRecord(f *testing.F) {
	for _, rec := range allRecords[:4] {
		var buf bytes.Buffer
		if err := job.WriteRecord(&buf, rec); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Add([]byte("exited 0\nsignaled 9\nstopped\n"))
	f.Add([]byte("out 3\nab"))
	f.Add([]byte("started 1 01\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for {
			rec, err := job.ReadRecord(r)
			if err != nil {
				return
			}
			var buf bytes.Buffer
			if err := job.WriteRecord(&buf, rec); err != nil {
				t.Fatalf("ReadRecord accepted %+v but WriteRecord refuses it: %v", rec, err)
			}
			again, err := job.ReadRecord(bufio.NewReader(&buf))
			if err != nil {
				t.Fatalf("reading back %q: %v", buf.Bytes(), err)
			}
			if diff := cmp.Diff(rec, again); diff != "" {
				t.Fatalf("record changed on a round trip (-first +again):\n%s", diff)
			}
		}
	})
}

// FuzzReadMessage checks that ReadMessage never panics and that every job it accepts can be
// written back.
func FuzzReadMessage(f *testing.F) {
	var buf bytes.Buffer
	if err := job.WriteJob(&buf, testJob("echo hi")); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("CANCEL\n"))
	f.Add([]byte("STOP\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kind, jb, err := job.ReadMessage(bufio.NewReader(bytes.NewReader(data)))
		if err != nil || kind != job.MessageJob {
			return
		}
		if err := job.WriteJob(io.Discard, jb); err != nil {
			t.Fatalf("ReadMessage accepted %+v but WriteJob refuses it: %v", jb, err)
		}
	})
}
