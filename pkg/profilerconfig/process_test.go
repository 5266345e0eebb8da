package profilerconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// helperEnv makes the test binary act as another Grafana process toggling the file (see TestMain).
const helperEnv = "PROFILERCONFIG_TOGGLE_HELPER"

func TestMain(m *testing.M) {
	if p := os.Getenv(helperEnv); p != "" {
		l, err := NewAllowList(p)
		if err == nil {
			for i := range 50 {
				if _, err = l.SetMetricEnable(p, i%2 == 0); err != nil {
					break
				}
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCrossProcessToggles checks the flock: the in-process mutex cannot serialise separate processes.
func TestCrossProcessToggles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	write(t, p, sample)
	var cmds []*exec.Cmd
	for range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+p)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	got := read(t, p)
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("file is not valid JSON after toggles from 4 processes: %v\n%s", err, got)
	}
	// Each process ends on metric_enable 0 (its 50th toggle), so whichever finished last left 0.
	if got != sample {
		t.Errorf("file after toggles:\n%s", got)
	}
	assertOnlyFiles(t, filepath.Dir(p), "c.json", "c.json.lock")
}
