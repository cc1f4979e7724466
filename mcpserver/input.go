package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/libtmux/libtmux-mcp/tmux"
)

// Bounds of one input call.
const (
	// tmux refuses a command line over 16 KiB ("command too long"), so
	// text typed in one call stays well under it; paste_text loads longer
	// text into its buffer in pieces of this size.
	maxTextBytes  = 8 << 10
	maxPasteBytes = 64 << 10 // text of one paste_text call
	maxKeys       = 64       // key names in one send_keys call or batch row
	maxBatchRows  = 32       // rows of one send_keys_batch call
	maxBatchSize  = 64 << 10 // bytes of keys and text in one batch
)

// keyInput is one piece of input for a pane: named keys or literal text,
// then Enter if asked. send_keys takes one; send_keys_batch takes rows.
type keyInput struct {
	PaneID string   `json:"paneId"`
	Keys   []string `json:"keys,omitempty" jsonschema:"Enter, C-c, Up, F5, M-x, q"`
	Text   string   `json:"text,omitempty"`
	Enter  bool     `json:"enter,omitempty"`
}

// checkText refuses text that cannot be typed literally: NUL, and control
// characters other than tab, newline and carriage return, which are keys
// (Escape, C-c…) and belong in keys.
func checkText(what, text string, limit int) error {
	if len(text) > limit {
		return fmt.Errorf("%s is %d bytes; the limit is %d, so split it into several calls", what, len(text), limit)
	}
	for i, r := range text {
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s has control character %U at byte %d; send control keys with send_keys keys (C-c, Escape…)", what, r, i)
		}
	}
	return nil
}

// args checks in and returns the send-keys arguments after "-t PANE", or
// an error naming what is wrong. size is the bytes of keys and text.
func (in keyInput) args() (args []string, size int, err error) {
	if err := checkID("pane", in.PaneID); err != nil {
		return nil, 0, err
	}
	switch {
	case in.Text != "" && len(in.Keys) > 0:
		return nil, 0, errors.New("give keys or text, not both; send them in two calls or as two send_keys_batch rows")
	case in.Text != "":
		if err := checkText("text", in.Text, maxTextBytes); err != nil {
			return nil, 0, err
		}
		return []string{"-l", "--", tmux.Arg(in.Text)}, len(in.Text), nil
	case len(in.Keys) == 0 && !in.Enter:
		return nil, 0, errors.New(`give keys (like ["C-c"]) or text (like "ls"); nothing to send`)
	case len(in.Keys) > maxKeys:
		return nil, 0, fmt.Errorf("%d keys; at most %d per call", len(in.Keys), maxKeys)
	}
	args = []string{"--"}
	for _, k := range in.Keys {
		tk, err := tmux.ParseKey(k)
		if err != nil {
			return nil, 0, fmt.Errorf("%w; send words as text", err)
		}
		args = append(args, tk)
		size += len(k)
	}
	return args, size, nil
}

// send types one checked input into pane in one tmux call: the text or
// keys, then Enter.
func (s *server) send(ctx context.Context, in keyInput, args []string) error {
	argv := append([]string{"send-keys", "-t", in.PaneID}, args...)
	switch {
	case in.Enter && args[0] == "-l":
		// -l would type "Enter" as five letters: a second command presses it.
		argv = append(argv, ";", "send-keys", "-t", in.PaneID, "Enter")
	case in.Enter:
		argv = append(argv, "Enter")
	}
	if _, err := s.tmux.Run(ctx, argv...); err != nil {
		return s.explain(ctx, err, "pane", in.PaneID)
	}
	return nil
}
