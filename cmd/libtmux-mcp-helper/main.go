// Command libtmux-mcp-helper runs tmux_run scripts for an enrolled zsh, which starts it as
// "libtmux-mcp-helper serve" with its broker connection on fd 3. All logic is in package helper;
// see its documentation for the protocol. Build it static: CGO_ENABLED=0 go install
// github.com/libtmux/libtmux-mcp/cmd/libtmux-mcp-helper.
package main

import (
	"os"

	"github.com/libtmux/libtmux-mcp/helper"
)

func main() {
	os.Exit(helper.Main(os.Args[1:]))
}
