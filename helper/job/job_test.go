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

func TestJobRoundTrip(t *testing.T) {
	tests := []job.Job{
		{RunID: testRunID, StdoutLimit: job.DefaultOutput, StderrLimit: job.DefaultOutput, Script: []byte("echo hi\n")},
		{RunID: testRunID, StdoutLimit: 0, StderrLimit: job.MaxOutput, Script: []byte{}},
		{RunID: testRunID, StdoutLimit: job.MaxOutput, StderrLimit: 0, Script: bytes.Repeat([]byte{'\n', 0xff}, job.MaxScript/2)},
	}
	for _, jb := range tests {
		jb.Digest = job.Digest(jb.Script)
		var buf bytes.Buffer
		if err := job.WriteJob(&buf, jb); err != nil {
			t.Fatalf("WriteJob: %v", err)
		}
		buf.WriteString("STOP\n")
		r := bufio.NewReader(&buf)
		got, cancelled, err := job.ReadRequest(r)
		if err != nil || cancelled {
			t.Fatalf("ReadRequest = _, %v, %v; want a job", cancelled, err)
		}
		if diff := cmp.Diff(jb, got); diff != "" {
			t.Errorf("job round trip (-sent +read):\n%s", diff)
		}
		if rest, _ := io.ReadAll(r); string(rest) != "STOP\n" {
			t.Errorf("after the job the reader holds %q; want %q", rest, "STOP\n")
		}
	}
}

func TestCancel(t *testing.T) {
	var buf bytes.Buffer
	if err := job.WriteCancel(&buf); err != nil {
		t.Fatal(err)
	}
	jb, cancelled, err := job.ReadRequest(bufio.NewReader(&buf))
	if err != nil || !cancelled {
		t.Errorf("ReadRequest(CANCEL) = %+v, %v, %v; want cancelled", jb, cancelled, err)
	}
}

func TestReadRequestRejects(t *testing.T) {
	digest := job.Digest([]byte("x"))
	jobLine := func(fields string) string { return "JOB " + fields }
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty input is EOF", "", io.EOF},
		{"STOP is not a request", "STOP\n", job.ErrMalformed},
		{"CANCEL takes no argument", "CANCEL now\n", job.ErrMalformed},
		{"lowercase verb", "job 1 " + testRunID + " " + digest + " 1 1 1\nx", job.ErrMalformed},
		{"unknown version", jobLine("2 " + testRunID + " " + digest + " 1 1 1\nx"), job.ErrMalformed},
		{"run id has uppercase", jobLine("1 " + strings.ToUpper(testRunID) + " " + digest + " 1 1 1\nx"), job.ErrMalformed},
		{"run id too short", jobLine("1 " + testRunID[1:] + " " + digest + " 1 1 1\nx"), job.ErrMalformed},
		{"digest has uppercase", jobLine("1 " + testRunID + " " + strings.ToUpper(digest) + " 1 1 1\nx"), job.ErrMalformed},
		{"stdout limit over the ceiling", jobLine("1 " + testRunID + " " + digest + " 262145 1 1\nx"), job.ErrMalformed},
		{"negative stderr limit", jobLine("1 " + testRunID + " " + digest + " 1 -1 1\nx"), job.ErrMalformed},
		{"script over the limit", jobLine("1 " + testRunID + " " + digest + " 1 1 65537\n"), job.ErrMalformed},
		{"leading zero", jobLine("1 " + testRunID + " " + digest + " 01 1 1\nx"), job.ErrMalformed},
		{"missing field", jobLine("1 " + testRunID + " " + digest + " 1 1\nx"), job.ErrMalformed},
		{"extra field", jobLine("1 " + testRunID + " " + digest + " 1 1 1 1\nx"), job.ErrMalformed},
		{"double space", jobLine("1  " + testRunID + " " + digest + " 1 1 1\nx"), job.ErrMalformed},
		{"NUL in script", jobLine("1 " + testRunID + " " + digest + " 1 1 3\na\x00b"), job.ErrMalformed},
		{"script cut short", jobLine("1 " + testRunID + " " + digest + " 1 1 3\nab"), io.ErrUnexpectedEOF},
		{"header without newline", "CANCEL", io.ErrUnexpectedEOF},
		{"header over 128 bytes", jobLine(strings.Repeat("1", 200) + "\n"), job.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := job.ReadRequest(reader(tt.in))
			if !errors.Is(err, tt.want) {
				t.Errorf("ReadRequest(%q) = %v; want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestWriteJobRefuses(t *testing.T) {
	ok := job.Job{RunID: testRunID, Digest: job.Digest(nil), StdoutLimit: 1, StderrLimit: 1}
	tests := []struct {
		name string
		edit func(*job.Job)
	}{
		{"short run id", func(j *job.Job) { j.RunID = "abc" }},
		{"digest not hex", func(j *job.Job) { j.Digest = strings.Repeat("g", 64) }},
		{"stdout limit over the ceiling", func(j *job.Job) { j.StdoutLimit = job.MaxOutput + 1 }},
		{"negative stderr limit", func(j *job.Job) { j.StderrLimit = -1 }},
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
	{Kind: job.KindFailed, Reason: job.ReasonRunIDMismatch},
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
	// A 127-byte line plus its newline is the longest header; the reason does not matter here,
	// only that the line is read whole and judged on its content.
	line := "failed " + strings.Repeat("x", 120) + "\n"
	if len(line) != job.MaxHeader {
		t.Fatalf("test line is %d bytes; want %d", len(line), job.MaxHeader)
	}
	_, err := job.ReadRecord(reader(line))
	if !errors.Is(err, job.ErrMalformed) || !strings.Contains(err.Error(), "unknown failure reason") {
		t.Errorf("ReadRecord(128-byte line) = %v; want it read whole and refused for its reason", err)
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

// FuzzReadRequest checks that ReadRequest never panics and that every job it accepts can be
// written back.
func FuzzReadRequest(f *testing.F) {
	var buf bytes.Buffer
	script := []byte("echo hi")
	if err := job.WriteJob(&buf, job.Job{RunID: testRunID, Digest: job.Digest(script), StdoutLimit: 5, Script: script}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("CANCEL\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jb, cancelled, err := job.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
		if err != nil || cancelled {
			return
		}
		if err := job.WriteJob(io.Discard, jb); err != nil {
			t.Fatalf("ReadRequest accepted %+v but WriteJob refuses it: %v", jb, err)
		}
	})
}
