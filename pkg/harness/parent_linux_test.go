package harness

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPluginsDieWithTheirParent: a process that started plugins through Launch and is then killed (a test binary
// at its timeout, an interrupted benchmark) takes them with it.
func TestPluginsDieWithTheirParent(t *testing.T) {
	if os.Getenv("HARNESS_PARENT") != "" {
		// The parent: start the plugin, say its PID, then wait to be killed.
		p, err := Launch(os.Getenv("HARNESS_PARENT"))
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("pid %d\n", p.PID())
		time.Sleep(2 * time.Minute)
		return
	}
	exe := Executable(t, DatasourceExecutable)
	parent := exec.Command(os.Args[0], "-test.run=^TestPluginsDieWithTheirParent$", "-test.timeout=3m") // #nosec G204 -- this test binary
	parent.Env = append(os.Environ(), "HARNESS_PARENT="+exe)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Process.Kill() //nolint:errcheck // killed below; this is for a failure before
	pid := 0
	lines := bufio.NewScanner(out)
	for pid == 0 && lines.Scan() {
		if s, ok := strings.CutPrefix(lines.Text(), "pid "); ok {
			pid, _ = strconv.Atoi(s)
		} else if strings.HasPrefix(lines.Text(), "error:") {
			t.Fatal(lines.Text())
		}
	}
	if pid <= 0 {
		t.Fatalf("the parent never said its plugin's PID (%v)", lines.Err())
	}
	if !alive(pid) {
		t.Fatalf("plugin %d is not running", pid)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for deadline := time.Now().Add(30 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("plugin %d still runs 30 s after its parent was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether pid is a running process: not gone, and not a zombie waiting for a reaper.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
