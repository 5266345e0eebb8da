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
	"strconv"
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

// listenFleet builds cfg's fleet for sched on consecutive loopback ports and claims them. The bases tried lie below
// the kernel's ephemeral range: there, other packages' client sockets (running beside this one) take ports at
// random and made every one of twenty ranges probed there busy once, and a probe that closes its listeners before the
// fleet listens leaves the ports to whoever comes next. Listen claims them all or none, so a busy range is skipped.
func listenFleet(t *testing.T, cfg Config, sched FleetSchedule, sdFile string) (*ScaledFleet, int) {
	t.Helper()
	lo, hi := 10000, ephemeralLow()
	for attempt := range 50 {
		base := lo + (attempt*7919+os.Getpid()*31)%(hi-lo-sched.Max())
		cfg.Addr = fmt.Sprintf("127.0.0.1:%d", base)
		f, err := NewScaledFleet(cfg, sched, sdFile, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Listen(); err != nil {
			t.Log(err)
			continue
		}
		return f, base
	}
	t.Fatal("no free port range in 50 tries")
	return nil, 0
}

// ephemeralLow is the lowest port the kernel hands out to client sockets (Linux's ip_local_port_range), 32768 where
// it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if lo, err := strconv.Atoi(f[0]); err == nil && lo > 12000 {
			return lo
		}
	}
	return 32768
}

// TestScaledFleetListensAllOrNone: a busy port in the range fails Listen with the instance named, and frees the
// ports it had claimed before it, so the next try may take them.
func TestScaledFleetListensAllOrNone(t *testing.T) {
	sched, _ := ParseFleetSchedule("3")
	f, base := listenFleet(t, Default(), sched, "")
	for _, ln := range f.lns {
		ln.Close()
	}
	busy, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+2))
	if err != nil {
		t.Skipf("port %d was taken meanwhile: %v", base+2, err)
	}
	defer busy.Close()
	cfg := Default()
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", base)
	g, err := NewScaledFleet(cfg, sched, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Listen(); err == nil || !strings.Contains(err.Error(), "fleet instance 2") {
		t.Fatalf("Listen with port %d busy: %v, want instance 2's error", base+2, err)
	}
	if g.lns != nil {
		t.Error("a failed Listen kept its listeners")
	}
	for i := range 2 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
		if err != nil {
			t.Errorf("port %d still held after the failed Listen: %v", base+i, err)
			continue
		}
		ln.Close()
	}
}

// TestScaledFleetFollowsItsSchedule: the live instances answer /metrics, departed ones 503, and /sd and the file_sd
// file list exactly the live ones as the schedule moves.
func TestScaledFleetFollowsItsSchedule(t *testing.T) {
	sched, _ := ParseFleetSchedule("2,4@1m,1@2m")
	sdFile := filepath.Join(t.TempDir(), "targets.json")
	f, base := listenFleet(t, Default(), sched, sdFile)
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
