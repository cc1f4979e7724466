package tmuxtest

import (
	"bufio"
	"os/exec"
	"testing"
)

// StartSaying starts cmd, which must print want as its first line once it is ready (a shell
// running its command string, a child that took a lock), waits for that line, and kills cmd
// when the test ends. A line exec.Cmd.Start's return cannot give: the kernel may not have set
// up the new program's arguments yet, and the program has done nothing yet.
func StartSaying(t testing.TB, cmd *exec.Cmd, want string) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != want+"\n" {
		t.Fatalf("%s printed %q first (%v); want %q", cmd.Path, line, err, want)
	}
}
