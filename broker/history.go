package broker

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxHistory is how many finished runs the broker remembers per pane, for a person to read
// (libtmux-mcp status); older ones are forgotten.
const MaxHistory = 100

// maxFirstLine bounds the part of a script's first line a RunRecord keeps, in runes.
const maxFirstLine = 80

// RunRecord is one run that was authorized, as the person who lent the pane may read it.
type RunRecord struct {
	Start      time.Time
	Duration   time.Duration
	FirstLine  string      // the script's first line, cut at maxFirstLine runes, controls shown as '?'
	Digest     string      // the script's digest, as tmux_run's receipt names it
	Code       Code        // empty when the script completed and was observed
	Completion *Completion // nil unless observed
	Running    bool        // a background run still going (Duration: so far)
}

// History returns pane's remembered runs, oldest first, then its background runs still going.
func (b *Broker) History(pane string) []RunRecord {
	b.mu.Lock()
	runs := append([]RunRecord(nil), b.history[pane]...)
	b.mu.Unlock()
	for _, v := range b.Backgrounds() {
		if v.Pane == pane && v.Running {
			runs = append(runs, RunRecord{Start: v.Started, Duration: time.Since(v.Started), FirstLine: v.Command, Digest: v.Digest, Running: true})
		}
	}
	return runs
}

// remember records a run that was authorized (out.Receipt set), keeping the last MaxHistory of
// its pane.
func (b *Broker) remember(pane string, start time.Time, script []byte, out Outcome) {
	if out.Receipt == nil {
		return
	}
	rec := RunRecord{
		Start: start, Duration: time.Since(start), FirstLine: firstLine(script),
		Digest: out.Receipt.ScriptDigest, Code: out.Code, Completion: out.Completion,
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	h := append(b.history[pane], rec)
	if len(h) > MaxHistory {
		h = append([]RunRecord(nil), h[len(h)-MaxHistory:]...)
	}
	b.history[pane] = h
}

// firstLine is the first line of script as one line a terminal shows safely.
func firstLine(script []byte) string {
	line, _, _ := strings.Cut(string(script), "\n")
	var sb strings.Builder
	n := 0
	for _, r := range line {
		if n == maxFirstLine {
			sb.WriteString("…")
			break
		}
		if r == utf8.RuneError || unicode.IsControl(r) {
			r = '?'
		}
		sb.WriteRune(r)
		n++
	}
	return sb.String()
}
