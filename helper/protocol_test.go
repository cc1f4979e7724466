package helper_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/libtmux/libtmux-mcp/helper"
)

const testRunID = "0123456789abcdef0123456789abcdef"

func reader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

func TestDigest(t *testing.T) {
	// BLAKE3-256 of the empty input, from the BLAKE3 specification's test vectors.
	const want = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	if got := helper.Digest(nil); got != want {
		t.Errorf("Digest(nil) = %q; want %q", got, want)
	}
}

func TestJobRoundTrip(t *testing.T) {
	tests := []helper.Job{
		{RunID: testRunID, StdoutLimit: helper.DefaultOutput, StderrLimit: helper.DefaultOutput, Script: []byte("echo hi\n")},
		{RunID: testRunID, StdoutLimit: 0, StderrLimit: helper.MaxOutput, Script: []byte{}},
		{RunID: testRunID, StdoutLimit: helper.MaxOutput, StderrLimit: 0, Script: bytes.Repeat([]byte{'\n', 0xff}, helper.MaxScript/2)},
	}
	for _, job := range tests {
		job.Digest = helper.Digest(job.Script)
		var buf bytes.Buffer
		if err := helper.WriteJob(&buf, job); err != nil {
			t.Fatalf("WriteJob: %v", err)
		}
		buf.WriteString("STOP\n")
		r := bufio.NewReader(&buf)
		got, cancelled, err := helper.ReadRequest(r)
		if err != nil || cancelled {
			t.Fatalf("ReadRequest = _, %v, %v; want a job", cancelled, err)
		}
		if diff := cmp.Diff(job, got); diff != "" {
			t.Errorf("job round trip (-sent +read):\n%s", diff)
		}
		if rest, _ := io.ReadAll(r); string(rest) != "STOP\n" {
			t.Errorf("after the job the reader holds %q; want %q", rest, "STOP\n")
		}
	}
}

func TestCancel(t *testing.T) {
	var buf bytes.Buffer
	if err := helper.WriteCancel(&buf); err != nil {
		t.Fatal(err)
	}
	job, cancelled, err := helper.ReadRequest(bufio.NewReader(&buf))
	if err != nil || !cancelled {
		t.Errorf("ReadRequest(CANCEL) = %+v, %v, %v; want cancelled", job, cancelled, err)
	}
}

func TestReadRequestRejects(t *testing.T) {
	digest := helper.Digest([]byte("x"))
	job := func(fields string) string { return "JOB " + fields }
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty input is EOF", "", io.EOF},
		{"STOP is not a request", "STOP\n", helper.ErrMalformed},
		{"CANCEL takes no argument", "CANCEL now\n", helper.ErrMalformed},
		{"lowercase verb", "job 1 " + testRunID + " " + digest + " 1 1 1\nx", helper.ErrMalformed},
		{"unknown version", job("2 " + testRunID + " " + digest + " 1 1 1\nx"), helper.ErrMalformed},
		{"run id has uppercase", job("1 " + strings.ToUpper(testRunID) + " " + digest + " 1 1 1\nx"), helper.ErrMalformed},
		{"run id too short", job("1 " + testRunID[1:] + " " + digest + " 1 1 1\nx"), helper.ErrMalformed},
		{"digest has uppercase", job("1 " + testRunID + " " + strings.ToUpper(digest) + " 1 1 1\nx"), helper.ErrMalformed},
		{"stdout limit over the ceiling", job("1 " + testRunID + " " + digest + " 262145 1 1\nx"), helper.ErrMalformed},
		{"negative stderr limit", job("1 " + testRunID + " " + digest + " 1 -1 1\nx"), helper.ErrMalformed},
		{"script over the limit", job("1 " + testRunID + " " + digest + " 1 1 65537\n"), helper.ErrMalformed},
		{"leading zero", job("1 " + testRunID + " " + digest + " 01 1 1\nx"), helper.ErrMalformed},
		{"missing field", job("1 " + testRunID + " " + digest + " 1 1\nx"), helper.ErrMalformed},
		{"extra field", job("1 " + testRunID + " " + digest + " 1 1 1 1\nx"), helper.ErrMalformed},
		{"double space", job("1  " + testRunID + " " + digest + " 1 1 1\nx"), helper.ErrMalformed},
		{"NUL in script", job("1 " + testRunID + " " + digest + " 1 1 3\na\x00b"), helper.ErrMalformed},
		{"script cut short", job("1 " + testRunID + " " + digest + " 1 1 3\nab"), io.ErrUnexpectedEOF},
		{"header without newline", "CANCEL", io.ErrUnexpectedEOF},
		{"header over 128 bytes", job(strings.Repeat("1", 200) + "\n"), helper.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := helper.ReadRequest(reader(tt.in))
			if !errors.Is(err, tt.want) {
				t.Errorf("ReadRequest(%q) = %v; want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestWriteJobRefuses(t *testing.T) {
	ok := helper.Job{RunID: testRunID, Digest: helper.Digest(nil), StdoutLimit: 1, StderrLimit: 1}
	tests := []struct {
		name string
		edit func(*helper.Job)
	}{
		{"short run id", func(j *helper.Job) { j.RunID = "abc" }},
		{"digest not hex", func(j *helper.Job) { j.Digest = strings.Repeat("g", 64) }},
		{"stdout limit over the ceiling", func(j *helper.Job) { j.StdoutLimit = helper.MaxOutput + 1 }},
		{"negative stderr limit", func(j *helper.Job) { j.StderrLimit = -1 }},
		{"script over the limit", func(j *helper.Job) { j.Script = make([]byte, helper.MaxScript+1) }},
		{"NUL in script", func(j *helper.Job) { j.Script = []byte("a\x00") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := ok
			tt.edit(&job)
			var buf bytes.Buffer
			if err := helper.WriteJob(&buf, job); !errors.Is(err, helper.ErrMalformed) || buf.Len() != 0 {
				t.Errorf("WriteJob = %v, wrote %d bytes; want ErrMalformed and nothing written", err, buf.Len())
			}
		})
	}
}

// allRecords has one record of every kind, and the extremes of every number.
var allRecords = []helper.Record{
	{Kind: helper.KindStarted, PID: 1234, PGID: 1234},
	{Kind: helper.KindStarted, PID: 1, PGID: 1<<31 - 1},
	{Kind: helper.KindStdout, Data: []byte("out\n")},
	{Kind: helper.KindStderr, Data: []byte{0}},
	{Kind: helper.KindStdout, Data: bytes.Repeat([]byte{0xff, '\n'}, helper.MaxChunk/2)},
	{Kind: helper.KindExited, Status: 0},
	{Kind: helper.KindExited, Status: 255},
	{Kind: helper.KindSignaled, Signal: 1},
	{Kind: helper.KindSignaled, Signal: 64},
	{Kind: helper.KindOverflow, Stream: helper.StreamStdout},
	{Kind: helper.KindOverflow, Stream: helper.StreamStderr},
	{Kind: helper.KindStopped},
	{Kind: helper.KindFailed, Reason: helper.ReasonDigestMismatch},
	{Kind: helper.KindFailed, Reason: helper.ReasonBadJob},
	{Kind: helper.KindFailed, Reason: helper.ReasonRunIDMismatch},
	{Kind: helper.KindFailed, Reason: helper.ReasonSpawn},
	{Kind: helper.KindFailed, Reason: helper.ReasonInternal},
}

func TestRecordRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	for _, rec := range allRecords {
		if err := helper.WriteRecord(&buf, rec); err != nil {
			t.Fatalf("WriteRecord(%+v): %v", rec, err)
		}
	}
	r := bufio.NewReader(&buf)
	var got []helper.Record
	for {
		rec, err := helper.ReadRecord(r)
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
		want := rec.Kind != helper.KindStarted && rec.Kind != helper.KindStdout && rec.Kind != helper.KindStderr
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
		{"\n", "an empty line has no kind", helper.ErrMalformed},
		{"hello 1\n", "unknown kind", helper.ErrMalformed},
		{"Exited 0\n", "kinds are lowercase", helper.ErrMalformed},
		{" exited 0\n", "leading space", helper.ErrMalformed},
		{"exited 0 \n", "trailing space", helper.ErrMalformed},
		{"exited 0\r\n", "CR is not part of a number", helper.ErrMalformed},
		{"exited\n", "exited needs a status", helper.ErrMalformed},
		{"exited 256\n", "statuses are 0..255", helper.ErrMalformed},
		{"exited -1\n", "no sign", helper.ErrMalformed},
		{"exited +1\n", "no sign", helper.ErrMalformed},
		{"exited 01\n", "no leading zero", helper.ErrMalformed},
		{"exited 1e2\n", "digits only", helper.ErrMalformed},
		{"exited 0x1\n", "digits only", helper.ErrMalformed},
		{"exited 1 2\n", "one argument", helper.ErrMalformed},
		{"exited 99999999999999999999\n", "overlong number", helper.ErrMalformed},
		{"signaled 0\n", "signal 0 kills nothing", helper.ErrMalformed},
		{"signaled 65\n", "signals are 1..64", helper.ErrMalformed},
		{"started 1\n", "started needs a pid and a pgid", helper.ErrMalformed},
		{"started 0 1\n", "pid 0 is not a process", helper.ErrMalformed},
		{"started 1  1\n", "double space", helper.ErrMalformed},
		{"started 1 2 3\n", "three numbers", helper.ErrMalformed},
		{"started 1 2147483648\n", "pgid over 2^31-1", helper.ErrMalformed},
		{"out 0\n", "an empty chunk is never sent", helper.ErrMalformed},
		{"out 32769\n", "chunks are at most 32 KiB", helper.ErrMalformed},
		{"err\n", "err needs a size", helper.ErrMalformed},
		{"out 5\nabc", "chunk cut short", io.ErrUnexpectedEOF},
		{"overflow stdin\n", "only stdout and stderr overflow", helper.ErrMalformed},
		{"overflow\n", "overflow names its stream", helper.ErrMalformed},
		{"stopped now\n", "stopped takes no argument", helper.ErrMalformed},
		{"stopped \n", "stopped takes no argument, not even an empty one", helper.ErrMalformed},
		{"failed oops\n", "unknown failure reason", helper.ErrMalformed},
		{"failed\n", "failed names its reason", helper.ErrMalformed},
		{"exited 0", "header without newline", io.ErrUnexpectedEOF},
		{"failed " + strings.Repeat("x", 121) + "\n", "129-byte header", helper.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			rec, err := helper.ReadRecord(reader(tt.in))
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
	if len(line) != helper.MaxHeader {
		t.Fatalf("test line is %d bytes; want %d", len(line), helper.MaxHeader)
	}
	_, err := helper.ReadRecord(reader(line))
	if !errors.Is(err, helper.ErrMalformed) || !strings.Contains(err.Error(), "unknown failure reason") {
		t.Errorf("ReadRecord(128-byte line) = %v; want it read whole and refused for its reason", err)
	}
}

func TestWriteRecordRefuses(t *testing.T) {
	tests := []struct {
		rec helper.Record
		why string
	}{
		{helper.Record{Kind: "hello"}, "unknown kind"},
		{helper.Record{}, "no kind"},
		{helper.Record{Kind: helper.KindStdout}, "empty chunk"},
		{helper.Record{Kind: helper.KindStderr, Data: make([]byte, helper.MaxChunk+1)}, "chunk over 32 KiB"},
		{helper.Record{Kind: helper.KindExited, Status: 256}, "status over 255"},
		{helper.Record{Kind: helper.KindExited, Status: 0, Data: []byte("x")}, "data on a final record"},
		{helper.Record{Kind: helper.KindSignaled}, "signal 0"},
		{helper.Record{Kind: helper.KindStarted, PID: 1}, "pgid 0"},
		{helper.Record{Kind: helper.KindOverflow, Stream: "stdin"}, "unknown stream"},
		{helper.Record{Kind: helper.KindFailed, Reason: "oops"}, "unknown reason"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := helper.WriteRecord(&buf, tt.rec); !errors.Is(err, helper.ErrMalformed) || buf.Len() != 0 {
			t.Errorf("WriteRecord(%+v) = %v, wrote %d bytes; want ErrMalformed and nothing written (%s)", tt.rec, err, buf.Len(), tt.why)
		}
	}
}

// FuzzReadRecord checks that ReadRecord never panics, and that every record it accepts can be
// written back and reads the same.
func FuzzReadRecord(f *testing.F) {
	for _, rec := range allRecords[:4] {
		var buf bytes.Buffer
		if err := helper.WriteRecord(&buf, rec); err != nil {
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
			rec, err := helper.ReadRecord(r)
			if err != nil {
				return
			}
			var buf bytes.Buffer
			if err := helper.WriteRecord(&buf, rec); err != nil {
				t.Fatalf("ReadRecord accepted %+v but WriteRecord refuses it: %v", rec, err)
			}
			again, err := helper.ReadRecord(bufio.NewReader(&buf))
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
	if err := helper.WriteJob(&buf, helper.Job{RunID: testRunID, Digest: helper.Digest(script), StdoutLimit: 5, Script: script}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("CANCEL\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		job, cancelled, err := helper.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
		if err != nil || cancelled {
			return
		}
		if err := helper.WriteJob(io.Discard, job); err != nil {
			t.Fatalf("ReadRequest accepted %+v but WriteJob refuses it: %v", job, err)
		}
	})
}
