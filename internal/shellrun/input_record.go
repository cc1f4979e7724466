package shellrun

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/libtmux/libtmux-mcp/live"
)

// unentered remembers, for each pane, input this server typed into a shell
// at its prompt without entering it (send_keys or paste_text without
// Enter): the shell's command line still holds it, and a command that
// run_shell_command typed there would join it, running it with the
// command's text as arguments. run_shell_command refuses such a pane until
// the line is entered or cleared.
type unentered struct {
	mu     sync.Mutex
	byPane map[string]unenteredInput
}

type unenteredInput struct {
	text string
	at   time.Time
	// The pane's view then, when it had one: a line the pane finished
	// since (the line was entered, by anyone) ends the record.
	epoch  string
	newest uint64
}

// lineEnds are the keys after which a shell's command line is empty: it
// was entered, interrupted or cleared.
var lineEnds = map[string]bool{"Enter": true, "C-m": true, "C-j": true, "C-c": true, "C-u": true}

// Input is one piece of input sent to a pane: named keys or literal text,
// then Enter if asked.
type Input struct {
	Keys    []string // as the caller named them
	LastKey string   // the last of Keys as tmux spells it (C-u, Enter)
	Text    string
	Enter   bool
}

// NoteInput records what in (sent to pane, whose shell was at its prompt
// when atPrompt; in a bracketed paste when bracketed) left on the shell's
// command line: a later Run there is refused until the line is entered or
// cleared. view is the pane's view, when it has one.
func (e *Engine) NoteInput(pane string, in Input, bracketed, atPrompt bool, view *live.View) {
	e.unentered.typed(pane, in, bracketed, atPrompt, view)
	for _, k := range in.Keys {
		if strings.EqualFold(k, "C-c") {
			e.interrupts.note(pane)
		}
	}
}

// typed records what in left on pane's command line. Text is typed as a
// terminal types it: a newline or carriage return enters what came before
// it, except inside a bracketed paste.
func (u *unentered) typed(pane string, in Input, bracketed, atPrompt bool, view *live.View) {
	if i := strings.LastIndexAny(in.Text, "\n\r"); i >= 0 && !bracketed {
		in.Text = in.Text[i+1:]
		in.Enter = in.Enter || in.Text == ""
	}
	switch {
	case !atPrompt, in.Enter:
		u.forget(pane)
	case in.Text != "":
		u.keep(pane, in.Text, view)
	case len(in.Keys) > 0:
		last := in.LastKey
		if len(last) == 3 && strings.HasPrefix(last, "C-") {
			last = strings.ToLower(last) // tmux reads C-U as C-u
			last = "C-" + last[2:]
		}
		if lineEnds[last] {
			u.forget(pane)
			return
		}
		u.keep(pane, strings.Join(in.Keys, " "), view)
	}
}

func (u *unentered) keep(pane, text string, view *live.View) {
	rec := unenteredInput{text: text, at: time.Now()}
	if view != nil {
		rec.epoch = view.Epoch()
		view.Read(func(l *live.Lines) { rec.newest = l.Newest() })
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byPane == nil || len(u.byPane) >= maxGuards {
		u.byPane = map[string]unenteredInput{}
	}
	u.byPane[pane] = rec
}

func (u *unentered) forget(pane string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.byPane, pane)
}

// refusal says why a command must not be typed into pane now, or nil. view
// is the pane's view, when it has one.
func (u *unentered) refusal(pane string, view *live.View) error {
	u.mu.Lock()
	rec, ok := u.byPane[pane]
	u.mu.Unlock()
	if !ok {
		return nil
	}
	if view != nil && view.Epoch() == rec.epoch {
		var newest uint64
		view.Read(func(l *live.Lines) { newest = l.Newest() })
		if newest > rec.newest {
			u.forget(pane) // the line was entered since
			return nil
		}
	}
	text := rec.text
	if len([]rune(text)) > 60 {
		text = string([]rune(text)[:60]) + "…"
	}
	return fmt.Errorf("unentered_input: pane %s's command line may still hold %q, typed by this server without Enter %s ago; a command typed now would join it and run it. Enter it (send_keys {\"paneId\":%q,\"keys\":[\"Enter\"]}) or clear it (keys [\"C-u\"]), then call again",
		pane, text, time.Since(rec.at).Round(time.Second), pane)
}

// echoWindow is how long typed input is discounted from waits for text.
const echoWindow = 10 * time.Second

// typedLog remembers what this server typed into panes recently, so a
// wait does not match the pane's echo of it.
type typedLog struct {
	mu    sync.Mutex
	panes map[string][]typedEntry
}

type typedEntry struct {
	lines []string
	at    time.Time
}

// NoteTyped records text the server typed or pasted into pane, so that
// a wait for text does not match the pane's echo of it for echoWindow.
// Input tools call it after sending.
func (e *Engine) NoteTyped(pane, text string) { e.typed.noteTyped(pane, text) }

// DiscountTyped blanks, in text read from pane, the first occurrence of
// each line recently typed there: the pane's echo of it.
func (e *Engine) DiscountTyped(pane, text string) string { return e.typed.discount(pane, text) }

// noteTyped records text typed into pane.
func (l *typedLog) noteTyped(pane, text string) {
	if l == nil || strings.TrimSpace(text) == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.panes == nil {
		l.panes = map[string][]typedEntry{}
	}
	now := time.Now()
	kept := l.panes[pane][:0]
	for _, e := range l.panes[pane] {
		if now.Sub(e.at) < echoWindow {
			kept = append(kept, e)
		}
	}
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	l.panes[pane] = append(kept, typedEntry{lines: lines, at: now})
}

// discount blanks every occurrence of each recently typed line in text: the
// pane's echo of it. A line editor may show a line twice: the terminal
// echoes what is typed while the shell still runs its last command, and the
// editor, once it starts, draws its prompt and the same pending input again
// ("cmd" then "$ cmd").
func (l *typedLog) discount(pane, text string) string {
	if l == nil {
		return text
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for _, e := range l.panes[pane] {
		if now.Sub(e.at) >= echoWindow {
			continue
		}
		for _, line := range e.lines {
			text = strings.ReplaceAll(text, line, strings.Repeat(" ", len(line)))
		}
	}
	return text
}
