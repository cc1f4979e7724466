// Command libtmux-mcp-helper runs one tmux_run script for an enrolled zsh, which starts it as
// "libtmux-mcp-helper job RUN_ID" with its broker connection on fd 3. All logic is in package
// helper; see its documentation for the protocol.
package main

import (
	"os"

	"github.com/libtmux/libtmux-mcp/helper"
)

func main() {
	os.Exit(helper.Main(os.Args[1:]))
}
