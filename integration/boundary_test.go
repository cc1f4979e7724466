package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A tmux server this process starts gets none of its secrets: the HTTP token is neither in
// tmux's global environment (show-environment -g) nor in the environment of a pane's process,
// which is what a script run there inherits (issue 17, finding 7).
func TestStartedTmuxServerGetsNoSecrets(t *testing.T) {
	tmuxServer(t) // skips without tmux
	const token = "secret-token-0123456789abcdef"
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "s")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	p := start(t, cleanEnv(t, dir, "LIBTMUX_MCP_HTTP_TOKEN="+token, "KEEP_ME=visible"), "--socket", sock)
	if line := p.startupLine(); !strings.Contains(line, "serving new") {
		t.Fatalf("startup line %q; want this process to start the tmux server", line)
	}
	obj, _ := p.answer("create_session", map[string]any{"sessionName": "env"})
	pane := obj["paneId"].(string)
	global, err := exec.Command("tmux", "-S", sock, "show-environment", "-g").CombinedOutput()
	if err != nil {
		t.Fatalf("show-environment -g: %v\n%s", err, global)
	}
	if strings.Contains(string(global), token) || strings.Contains(string(global), "LIBTMUX_MCP_HTTP_TOKEN") {
		t.Errorf("tmux's global environment holds the HTTP token:\n%s", global)
	}
	if !strings.Contains(string(global), "KEEP_ME=visible") {
		t.Errorf("tmux's global environment lost an ordinary variable:\n%s", global)
	}
	info, _ := p.answer("get_pane_info", map[string]any{"paneId": pane})
	pid := int(info["pane"].(map[string]any)["pid"].(float64))
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), token) {
		t.Errorf("the pane's process (%d) has the HTTP token in its environment", pid)
	}
}
