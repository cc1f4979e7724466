package shellrun

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/libtmux/libtmux-mcp/internal/fgproc"
)

// Info is one run as a listing shows it.
type Info struct {
	Handle  string
	Pane    string
	Command string // its first line
	Started time.Time
	// State is running, completed, interrupted or pane_died.
	State      string
	ExitStatus *int // set when State is completed
}

// List answers the runs in flight and those whose answer is still kept,
// oldest first.
func (e *Engine) List() []Info {
	e.runs.mu.Lock()
	var all []*shellRun
	now := time.Now()
	for id, run := range e.runs.byID {
		if t, ok := e.runs.expires[id]; ok && now.After(t) {
			continue
		}
		all = append(all, run)
	}
	e.runs.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].started.Before(all[j].started) })
	out := make([]Info, 0, len(all))
	for _, run := range all {
		first, _, _ := strings.Cut(run.command, "\n")
		in := Info{Handle: run.handle, Pane: run.pane, Command: first, Started: run.started, State: "running"}
		run.mu.Lock()
		switch {
		case run.end != 0:
			st := run.status
			in.State, in.ExitStatus = string(Completed), &st
		case run.interrupted:
			in.State = string(Interrupted)
		case run.lost != "":
			in.State = string(PaneDied)
		}
		run.mu.Unlock()
		out = append(out, in)
	}
	return out
}

// beginWait bounds how long Cancel waits for a run's begin line.
const beginWait = 5 * time.Second

// Cancel interrupts the run in.Handle (C-c to its pane) while its own
// frame is the pane's foreground job, and waits (in.Wait) for what
// follows. Anything else is a refusal that says why: the run ended, its
// frame has not begun, or the shell holds its terminal.
func (e *Engine) Cancel(ctx context.Context, in Request) (Result, error) {
	run, err := e.handleRun(in)
	if err != nil {
		return Result{}, err
	}
	// A run answered timed_out a moment ago may not have printed its begin line yet: wait for
	// it a little, as the caller would have to.
	wait := time.NewTimer(beginWait)
	select {
	case <-run.begun:
	case <-run.done:
	case <-wait.C:
	case <-ctx.Done():
	}
	wait.Stop()
	run.mu.Lock()
	begin, end, lost := run.begin, run.end, run.lost
	run.mu.Unlock()
	switch {
	case end != 0 || lost != "":
		return Result{}, fmt.Errorf("run %s has already ended, nothing was sent; collect it with wait_for_run {\"handle\":%q}", run.handle, run.handle)
	case begin == 0:
		return Result{}, fmt.Errorf("run %s has not begun in pane %s within %s (its begin line was not seen), so an interrupt could reach something else; nothing was sent: look at the pane with capture_pane, then retry or stop it with send_keys C-c", run.handle, run.pane, beginWait)
	}
	st, err := fgproc.Look(run.shellPID)
	switch {
	case err != nil:
		return Result{}, fmt.Errorf("whether run %s is the foreground job of pane %s cannot be told (%w), so nothing was sent; stop it on purpose with send_keys C-c", run.handle, run.pane, err)
	case st != fgproc.ChildInForeground:
		return Result{}, fmt.Errorf("run %s is not the foreground job of pane %s (its shell holds the terminal), so an interrupt would reach the shell, not the run; nothing was sent: collect it with wait_for_run {\"handle\":%q}", run.handle, run.pane, run.handle)
	}
	end2 := e.host.InputTo(run.pane)
	_, err = run.view.CommandList(ctx, nil, []string{"send-keys", "-t", run.pane, "C-c"})
	end2()
	if err != nil {
		return Result{}, e.host.Explain(ctx, err, run.pane)
	}
	e.interrupts.note(run.pane)
	return e.awaitRun(ctx, in, run.view, run), nil
}

// handleRun finds the followed run in.Handle (in in.Pane, when given).
func (e *Engine) handleRun(in Request) (*shellRun, error) {
	run := e.runs.lookup(in.Handle)
	if run == nil || (in.Pane != "" && run.pane != in.Pane) {
		where := ""
		if in.Pane != "" {
			where = " in pane " + in.Pane
		}
		return nil, fmt.Errorf("no run with handle %q%s: handles come from run_shell_command answers and are kept %s after their command ended; list the runs with list_runs, or read the pane with capture_since or capture_pane", in.Handle, where, e.viewKeep)
	}
	if run.view == nil {
		return nil, errors.New("handle " + in.Handle + " is of a command run without a control connection, which cannot be waited for or cancelled by its handle; read the pane with capture_since or capture_pane")
	}
	return run, nil
}

// FormatCursor is the cursor of a wait for a run that read n of its
// output lines.
func FormatCursor(n uint64) string { return "L" + strconv.FormatUint(n, 10) }

// ParseCursor reads a FormatCursor cursor; "" is the run's start.
func ParseCursor(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	rest, ok := strings.CutPrefix(c, "L")
	n, err := strconv.ParseUint(rest, 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("cursor %q is not one a run's answer gave (L and a count of lines, as in \"L120\"); pass the cursor of the last answer for the handle, or none for the whole output", c)
	}
	return n, nil
}
