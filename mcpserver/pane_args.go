package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
)

// Checks of the size and directory arguments that the tools making or
// resizing panes, windows and sessions share.

// sizeLimit bounds the columns and rows a tool may ask tmux for.
const sizeLimit = 1000

// checkSize refuses a width or height tmux cannot honour; 0 means "not
// given".
func checkSize(arg string, v int) error {
	if v < 0 || v > sizeLimit {
		return fmt.Errorf("%s %d is out of range; give 1 to %d", arg, v, sizeLimit)
	}
	return nil
}

// checkDirectory refuses a start directory that is not an absolute,
// printable path.
func checkDirectory(dir string) error {
	if dir == "" {
		return nil
	}
	if err := checkPrintableText("startDirectory", dir); err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("startDirectory %q is not absolute; give a full path such as /home/me/project", dir)
	}
	// tmux starts the shell elsewhere, silently, when the directory is
	// missing; the server and tmux share a host (a Unix socket).
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("startDirectory %q is not a directory on this host; tmux would start the shell somewhere else", dir)
	}
	return nil
}
