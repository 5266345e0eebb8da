package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseFleetSchedule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FleetSchedule
		err  string
	}{
		{in: "4", want: FleetSchedule{{0, 4}}},
		{in: "4,16@2m,2@5m", want: FleetSchedule{{0, 4}, {2 * time.Minute, 16}, {5 * time.Minute, 2}}},
		{in: " 0 , 3@1s", want: FleetSchedule{{0, 0}, {time.Second, 3}}},
		{in: "4@1s", err: "takes no @time"},
		{in: "4,16", err: "needs @time"},
		{in: "4,16@2m,2@1m", err: "not a time after"},
		{in: "x", err: "not a size"},
		{in: "257", err: "not a size from 0 to 256"},
		{in: strings.Repeat("1,", 70) + "1", err: "at most 64"},
	} {
		got, err := ParseFleetSchedule(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
	s, _ := ParseFleetSchedule("4,16@2m,2@5m")
	for at, want := range map[time.Duration]int{0: 4, time.Minute: 4, 2 * time.Minute: 16, 10 * time.Minute: 2} {
		if got := s.SizeAt(at); got != want {
			t.Errorf("size at %s = %d, want %d", at, got, want)
		}
	}
	if s.Max() != 16 {
		t.Errorf("max %d", s.Max())
	}
}

// freePorts finds a base port with n free ports after it on 127.0.0.1.
func freePorts(t *testing.T, n int) int {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := base+n < 65536
		for i := 0; ok && i < n; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				t.Log(err)
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// TestScaledFleetFollowsItsSchedule: the live instances answer /metrics, departed ones 503, and /sd and the file_sd
// file list exactly the live ones as the schedule moves.
func TestScaledFleetFollowsItsSchedule(t *testing.T) {
	sched, _ := ParseFleetSchedule("2,4@1m,1@2m")
	base := freePorts(t, sched.Max())
	cfg := Default()
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", base)
	sdFile := filepath.Join(t.TempDir(), "targets.json")
	f, err := NewScaledFleet(cfg, sched, sdFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	var elapsed atomic.Int64
	f.now = func() time.Time { return f.start.Add(time.Duration(elapsed.Load())) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	get := func(i int, path string) (int, string) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", base+i, path))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	targets := func(b []byte) int {
		var groups []struct{ Targets []string }
		if err := json.Unmarshal(b, &groups); err != nil || len(groups) != 1 {
			return -1
		}
		return len(groups[0].Targets)
	}
	for _, step := range []struct {
		at   time.Duration
		live int
	}{{0, 2}, {time.Minute, 4}, {2 * time.Minute, 1}} {
		elapsed.Store(int64(step.at))
		var sd, file int
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			code, body := get(0, "/sd")
			b, _ := os.ReadFile(sdFile)
			sd, file = targets([]byte(body)), targets(b)
			if code == http.StatusOK && sd == step.live && file == step.live {
				break
			}
		}
		if sd != step.live || file != step.live {
			t.Fatalf("at %s: /sd lists %d, the file %d, want %d", step.at, sd, file, step.live)
		}
		for i := range sched.Max() {
			code, body := get(i, "/metrics")
			if live := i < step.live; live != (code == http.StatusOK) || (live && !strings.Contains(body, "vllm:")) {
				t.Errorf("at %s: instance %d answered %d", step.at, i, code)
			}
		}
	}
}
