package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of a fleet schedule.
const (
	MaxScheduledFleet = 256
	maxScheduleSteps  = 64
)

// FleetStep is a fleet size from a moment on (real time since the start).
type FleetStep struct {
	At   time.Duration
	Size int
}

// FleetSchedule is how many instances a simulated fleet runs from when, in real time: "4,16@2m,2@5m" runs 4, then
// 16 from the second minute, then 2 from the fifth — an autoscaler's moves, for discovery tests and demos.
type FleetSchedule []FleetStep

// ParseFleetSchedule reads "size[@duration],…": the first step has no time (it starts at once), the others
// increasing times; sizes from 0 to MaxScheduledFleet.
func ParseFleetSchedule(s string) (FleetSchedule, error) {
	parts := strings.Split(strings.TrimSpace(s), ",")
	if len(parts) > maxScheduleSteps {
		return nil, fmt.Errorf("fleet schedule: %d steps, at most %d", len(parts), maxScheduleSteps)
	}
	var out FleetSchedule
	for i, p := range parts {
		sizeText, atText, timed := strings.Cut(strings.TrimSpace(p), "@")
		size, err := strconv.Atoi(sizeText)
		if err != nil || size < 0 || size > MaxScheduledFleet {
			return nil, fmt.Errorf("fleet schedule step %d: %.32q is not a size from 0 to %d", i+1, sizeText, MaxScheduledFleet)
		}
		var at time.Duration
		switch {
		case i == 0 && timed:
			return nil, errors.New("fleet schedule: the first step starts at once and takes no @time")
		case i > 0 && !timed:
			return nil, fmt.Errorf("fleet schedule step %d needs @time, e.g. 16@2m", i+1)
		case timed:
			if at, err = time.ParseDuration(atText); err != nil || at <= out[i-1].At {
				return nil, fmt.Errorf("fleet schedule step %d: %.32q is not a time after the step before", i+1, atText)
			}
		}
		out = append(out, FleetStep{At: at, Size: size})
	}
	return out, nil
}

// SizeAt is the fleet's size at elapsed real time.
func (f FleetSchedule) SizeAt(elapsed time.Duration) int {
	size := 0
	for _, s := range f {
		if elapsed >= s.At {
			size = s.Size
		}
	}
	return size
}

// Max is the largest size the schedule reaches.
func (f FleetSchedule) Max() int {
	m := 0
	for _, s := range f {
		m = max(m, s.Size)
	}
	return m
}

// ScaledFleet serves a fleet whose size follows a schedule: Max instances on consecutive ports from the base
// address's, each its own simulated server (seed + i). Instance i is live while i < the size now; a departed one
// answers 503, as a pod being removed does before its address goes. Every instance answers /sd with the live
// ones in Prometheus's http_sd format, and the file_sd file, when named, is rewritten (atomically) at every change.
type ScaledFleet struct {
	sched   FleetSchedule
	host    string
	base    int
	sdFile  string
	servers []*Server
	start   time.Time
	now     func() time.Time
	log     *log.Logger

	lns []net.Listener // every instance's, once Listen succeeded

	mu      sync.Mutex
	written int // the size the file_sd file holds; -1 before the first write
}

// NewScaledFleet builds the instances of cfg (listening from cfg.Addr's port) for the schedule.
func NewScaledFleet(cfg Config, sched FleetSchedule, sdFile string, logger *log.Logger) (*ScaledFleet, error) {
	if logger == nil {
		logger = log.Default()
	}
	host, portText, err := net.SplitHostPort(cfg.listenAddr())
	if err != nil {
		return nil, fmt.Errorf("fleet: address %q: %w", cfg.Addr, err)
	}
	base, err := strconv.Atoi(portText)
	if err != nil || base <= 0 || base+sched.Max() > 65536 {
		return nil, fmt.Errorf("fleet: %d instances from port %q do not fit in the port range", sched.Max(), portText)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	f := &ScaledFleet{sched: sched, host: host, base: base, sdFile: sdFile, start: time.Now(), now: time.Now, log: logger, written: -1}
	for i := range sched.Max() {
		c := cfg
		c.Seed = cfg.Seed + int64(i)
		s, err := NewServer(c, logger)
		if err != nil {
			return nil, err
		}
		f.servers = append(f.servers, s)
	}
	return f, nil
}

// size is the number of live instances now.
func (f *ScaledFleet) size() int { return f.sched.SizeAt(f.now().Sub(f.start)) }

// Targets are the live instances' host:port.
func (f *ScaledFleet) Targets() []string {
	out := []string{}
	for i := range f.size() {
		out = append(out, net.JoinHostPort(f.host, strconv.Itoa(f.base+i)))
	}
	return out
}

// sdJSON is the live instances as one http_sd / file_sd target group.
func (f *ScaledFleet) sdJSON() []byte {
	b, _ := json.Marshal([]map[string]any{{"targets": f.Targets(), "labels": map[string]string{"job": "vllm-sim"}}})
	return b
}

// handler serves instance i: /sd for the fleet, 503 once the instance has departed, else the simulated server.
func (f *ScaledFleet) handler(i int) http.Handler {
	inner := f.servers[i].Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sd" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(f.sdJSON())
			return
		}
		if i >= f.size() {
			http.Error(w, "scaled away", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// writeSD rewrites the file_sd file when the size changed since the last write.
func (f *ScaledFleet) writeSD() error {
	if f.sdFile == "" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.size()
	if n == f.written {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.sdFile), ".vllm-sim-sd-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(f.sdJSON()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), f.sdFile); err != nil {
		return err
	}
	f.written = n
	f.log.Printf("fleet of %d (file_sd %s)", n, f.sdFile)
	return nil
}

// Listen claims every instance's port, all or none: on an error no port stays open, so a caller may try another
// base. Run calls it when no one did.
func (f *ScaledFleet) Listen() error {
	if f.lns != nil {
		return nil
	}
	lns := make([]net.Listener, 0, len(f.servers))
	for i := range f.servers {
		ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.base+i)))
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return fmt.Errorf("fleet instance %d: %w", i, err)
		}
		lns = append(lns, ln)
	}
	f.lns = lns
	return nil
}

// Run listens for every instance (unless Listen already did) and serves until ctx ends.
func (f *ScaledFleet) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := f.Listen(); err != nil {
		return err
	}
	lns := f.lns
	if err := f.writeSD(); err != nil {
		return fmt.Errorf("fleet: file_sd: %w", err)
	}
	errs := make(chan error, len(lns))
	for i, ln := range lns {
		hs := &http.Server{Handler: f.handler(i), ReadHeaderTimeout: 10 * time.Second}
		go func() { errs <- serveUntil(ctx, hs, ln) }()
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for range lns {
				if err := <-errs; err != nil {
					return err
				}
			}
			return nil
		case err := <-errs:
			cancel()
			return err
		case <-tick.C:
			for _, s := range f.servers {
				s.Tick()
			}
			if err := f.writeSD(); err != nil {
				f.log.Printf("file_sd: %v", err)
			}
		}
	}
}

// serveUntil serves ln until ctx ends, then shuts the server down.
func serveUntil(ctx context.Context, hs *http.Server, ln net.Listener) error {
	go func() { // #nosec G118 -- runs once ctx is done: the shutdown needs a deadline of its own
		<-ctx.Done()
		shut, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = hs.Shutdown(shut)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
