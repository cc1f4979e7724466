package shellrun

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/libtmux/libtmux-mcp/internal/cursor"
	"github.com/libtmux/libtmux-mcp/internal/readbudget"
	"github.com/libtmux/libtmux-mcp/live"
)

// awaitRun waits for run within timeoutMs and answers what is known.
func (e *Engine) awaitRun(ctx context.Context, in Request, v *live.View, run *shellRun) Result {
	wctx, _, stopWait := in.Wait(ctx)
	defer stopWait()
	outcome := Outcome("")
	select {
	case <-run.done:
	case <-wctx.Done():
		select { // an end already here wins over a deadline just passed
		case <-run.done:
		default:
			outcome = ended(wctx, ctx)
		}
	}
	if ctx.Err() != nil || e.life.Err() != nil {
		outcome = Cancelled // shutdown, or the client gave up
	}
	res := Result{Output: []string{}}
	var notes []string
	if in.Clamped != "" {
		notes = append(notes, in.Clamped)
	}
	if outcome == Cancelled && ctx.Err() != nil {
		res.Outcome = outcome
		res.Handle = run.handle
		res.Note = "the wait was cancelled; the command may still be running in " + run.pane
		return res
	}
	run.mu.Lock()
	lost, end, interrupted := run.lost, run.end, run.interrupted
	run.mu.Unlock()
	if end != 0 || lost != "" {
		// Free the pane before answering. A run that ended without its
		// status was stopped by its follower, which may not have freed
		// the pane yet: endRun waits for it.
		e.endRun(v, run, "")
	}
	switch {
	case outcome != "":
		res.Outcome = outcome
	case interrupted:
		res.Outcome = Interrupted
	case lost != "":
		res.Outcome = PaneDied
	default:
		res.Outcome = Completed
	}
	e.runOutput(v, run, in.From, &res, &notes)
	switch res.Outcome {
	case Completed:
		st := run.status
		res.ExitStatus = &st
		res.Cursor = cursor.Stream{Pane: run.pane, Epoch: v.Epoch(), Line: end}.String()
	case TimedOut:
		res.Handle = run.handle
		notes = append([]string{fmt.Sprintf("the command is still running (handle %s): call wait_for_run with {\"handle\":%q,\"cursor\":%q} to wait for it and get its exit status and the output after this; cancel_run stops it; do not run it again", run.handle, run.handle, FormatCursor(res.Next))}, notes...)
		if why := e.stuck(ctx, v, run, &res); why != "" {
			notes = append([]string{why}, notes...)
		}
	case Cancelled:
		res.Handle = run.handle
		notes = append([]string{"the wait was cancelled; the command may still be running (handle " + run.handle + ")"}, notes...)
	case PaneDied, Interrupted:
		notes = append([]string{fmt.Sprintf("no exit status: %s", lost)}, notes...)
	}
	res.Note = strings.Join(notes, "; ")
	return res
}

// runOutput fills res's output: all of it when it fits the read budget,
// else its tail and its head, with the exact count of lines and
// characters left out (those still kept, readable with a capture_since
// cursor, and those lost). The tail is taken first, so the last line
// printed is always in the answer, or its end when it alone is longer
// than the budget.
func (e *Engine) runOutput(v *live.View, run *shellRun, from uint64, res *Result, notes *[]string) {
	run.mu.Lock()
	begin, end, count, last := run.begin, run.end, run.count, run.last
	head := append([]string{}, run.head...)
	run.mu.Unlock()
	res.Next = from
	if begin == 0 {
		if res.Outcome != TimedOut {
			*notes = append(*notes, "the command's output never started (its begin line was not seen)")
		}
		return
	}
	// The status line follows a line feed of its own: an empty last line
	// is the frame's.
	if end != 0 && count > 0 && last == "" {
		count--
	}
	res.Next = count
	// Lines before from were read already: the output starts after them.
	if from > 0 {
		from = min(from, count)
		if from < uint64(len(head)) {
			head = head[from:]
		} else {
			head = nil
			if n := min(count-from, uint64(max(e.budget.Lines, 1))); n > 0 {
				v.Read(func(l *live.Lines) { head = l.Get(begin+from+1, begin+from+n) })
			}
		}
		begin += from
		count -= from
	}
	lastLine := begin + count // line number of the last output line
	total := int(count)
	var cut int // characters the view did not keep of long lines
	var marks []live.Mark
	v.Read(func(l *live.Lines) {
		cut = l.Cut(begin+1, lastLine)
		for _, m := range l.Marks(begin) {
			if m.After <= lastLine {
				marks = append(marks, m)
			}
		}
	})
	if m := live.MarksNote(marks, begin); m != "" {
		*notes = append(*notes, m)
	}
	if cut > 0 {
		res.DroppedChars = cut
		*notes = append(*notes, fmt.Sprintf("%d characters of lines longer than %d characters were not kept (a line keeps its first %d) and are counted in droppedChars", cut, live.MaxLineRunes, live.MaxLineRunes))
	}
	if total <= len(head) {
		if t := e.budget.KeepOldest(head[:total]); t.DroppedLines == 0 && t.DroppedChars == 0 {
			res.Output = t.Lines
			return
		}
	}
	// Over the budget. The tail first: at most half the lines and half
	// the characters.
	candidates := min(max(e.budget.Lines-e.budget.Lines/2, 1), total)
	var tail []string
	var oldest uint64
	v.Read(func(l *live.Lines) {
		tail = l.Get(lastLine-uint64(candidates)+1, lastLine)
		oldest = l.Oldest()
	})
	tb := readbudget.Budget{Lines: len(tail), Chars: e.budget.Chars - e.budget.Chars/2}.KeepNewest(tail)
	// Then the head, with what the tail left, up to the tail's first line.
	hb := readbudget.Trimmed{}
	hBudget := readbudget.Budget{Lines: e.budget.Lines - len(tb.Lines), Chars: e.budget.Chars - runes(tb.Lines)}
	if hBudget.Lines > 0 && hBudget.Chars > 0 {
		hb = hBudget.KeepOldest(head[:min(len(head), total-len(tb.Lines))])
	}
	res.Output = append(hb.Lines, tb.Lines...)
	res.DroppedLines = total - len(res.Output)
	// Every character of the output this server still knows (kept in the
	// view, or in the run's head), less those returned.
	known := cut
	v.Read(func(l *live.Lines) { known += l.RuneCount(max(begin+1, oldest), lastLine) })
	uncounted := 0 // lines no longer in the view nor in the head
	if oldest > begin+1 {
		gone := int(min(oldest, lastLine+1) - begin - 1)
		known += runes(head[:min(gone, len(head))])
		uncounted = gone - min(gone, len(head))
	}
	res.DroppedChars = known - runes(res.Output)
	kept := len(hb.Lines)
	gapFrom := begin + uint64(kept) + 1       // first line left out
	gapTo := lastLine - uint64(len(tb.Lines)) // last line left out
	if gapFrom > gapTo {
		if res.DroppedChars > cut {
			*notes = append(*notes, fmt.Sprintf("%d characters were left out to stay within the read budget: a line longer than the budget keeps its end when it is the last, its start when it is the first", res.DroppedChars-cut))
		}
		return
	}
	readable := uint64(0)
	if gapTo >= oldest {
		readable = gapTo - max(gapFrom, oldest) + 1
	}
	msg := fmt.Sprintf("the output has %d lines; the first %d and the last %d are returned, the %d between (lines %d-%d of the pane's output) were left out to stay within the read budget", total, kept, len(tb.Lines), gapTo-gapFrom+1, gapFrom, gapTo)
	if readable > 0 {
		c := cursor.Stream{Pane: run.pane, Epoch: v.Epoch(), Line: max(gapFrom, oldest) - 1}
		msg += fmt.Sprintf("; %d of them are still kept: call capture_since with {\"paneId\":%q,\"cursor\":%q} (oldest first, repeat with each new cursor) to read them", readable, run.pane, c.String())
	}
	if lost := (gapTo - gapFrom + 1) - readable; lost > 0 {
		msg += fmt.Sprintf("; %d of them are lost: they left the lines kept for the pane (as many as its history-limit)", lost)
		if uncounted > 0 {
			msg += fmt.Sprintf(", and droppedChars does not count the characters of %d of them", uncounted)
		}
	}
	*notes = append(*notes, msg)
}

// runes counts the characters of lines.
func runes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += utf8.RuneCountInString(l)
	}
	return n
}

// Collect answers a run by its handle (in.Handle; in in.Pane when
// given): it waits for it (with in.Wait) and answers its status and the
// output still kept after in.From.
func (e *Engine) Collect(ctx context.Context, in Request) (Result, error) {
	run, err := e.handleRun(in)
	if err != nil {
		return Result{}, err
	}
	return e.awaitRun(ctx, in, run.view, run), nil
}

// stuck says why a run that timed out may wait forever, from what the
// pane shows: a pager waiting for a key, a full-screen program, or an
// unfinished last line (a prompt waiting for input), which it adds to the
// output. "" when nothing says so.
func (e *Engine) stuck(ctx context.Context, v *live.View, run *shellRun, res *Result) string {
	run.mu.Lock()
	begun := run.begin != 0
	run.mu.Unlock()
	var unfinished string
	var alt bool
	v.Read(func(l *live.Lines) { unfinished, alt = l.Unfinished(), l.Alternate() })
	out, err := v.Command(ctx, "display-message", "-p", "-t", run.pane, "#{pane_current_command}")
	current := strings.TrimPrefix(strings.TrimSpace(out), "-")
	if err == nil {
		if advice := foregroundAdvice(run.pane, foregroundNames(current, run.shellPID)); advice != "" {
			return "waiting on the handle cannot help: " + advice
		}
	}
	switch {
	case alt:
		return fmt.Sprintf("the pane shows a full-screen program (%s), which waits for keys: drive or quit it with send_keys", current)
	case begun && unfinished != "":
		res.Output = append(res.Output, unfinished)
		return fmt.Sprintf("the last line, %q, is unfinished: the command may be waiting for input; answer it with send_keys, or stop the command with send_keys C-c", unfinished)
	}
	return ""
}

// cancelledWhileTyping answers a run whose call, or the server, ended
// while its command line was being typed. tmux may have typed the line
// before its answer came: that is neither an error nor "nothing ran".
func cancelledWhileTyping(pane string) Result {
	return Result{Outcome: Cancelled, Output: []string{},
		Note: "cancelled while the command was being typed: it may have been typed, and then it may still be running in " + pane + "; look with capture_since before running it again"}
}
