//go:build !linux

package integration

// asForger: the credential forger of TestTmuxRunRootForgedCredentials exists on Linux only,
// as tmux_run does.
func asForger() (int, bool) { return 0, false }
