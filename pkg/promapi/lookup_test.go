package promapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// lookupServer answers the label values, instant query and status APIs, each request held until release is closed
// while hold is set; names is the __name__ values it lists, asked counts the requests by path.
type lookupServer struct {
	mu      sync.Mutex
	names   []string
	hold    chan struct{} // nil: answer at once
	asked   map[string]int
	flags   map[string]string
	version string
	blocks  string // the num_gpu_blocks of the one cache_config_info series /api/v1/series lists
}

func (f *lookupServer) serve(t *testing.T) *Client {
	t.Helper()
	f.asked = map[string]int{}
	return apiServer(t, func(r *http.Request) (any, bool) {
		f.mu.Lock()
		f.asked[r.URL.Path]++
		hold := f.hold
		names := append([]string(nil), f.names...)
		flags, version, blocks := f.flags, f.version, f.blocks
		f.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return nil, false
			}
		}
		var data any
		switch {
		case r.URL.Path == "/api/v1/label/__name__/values":
			data = names
		case r.URL.Path == "/api/v1/label/job/values":
			data = []string{"vllm"}
		case strings.HasPrefix(r.URL.Path, "/api/v1/label/"):
			data = []string{} // no instances: Names asks for no API server names
		case r.URL.Path == "/api/v1/query":
			// Layouts' count by (__name__, le), and the horizon query: one up sample of job vllm.
			data = map[string]any{"resultType": "vector", "result": []any{
				map[string]any{"metric": map[string]string{"__name__": "vllm:e2e_request_latency_seconds_bucket", "le": "+Inf", "h": "up", "job": "vllm"},
					"value": []any{1, "1800000000"}}}}
		case r.URL.Path == "/api/v1/labels":
			data = []string{"__name__", "instance", "replica"}
		case r.URL.Path == "/api/v1/series":
			data = []map[string]string{{"__name__": "vllm:cache_config_info", "num_gpu_blocks": blocks, "block_size": "16"}}
		case r.URL.Path == "/api/v1/status/buildinfo":
			data = map[string]string{"version": version}
		case r.URL.Path == "/api/v1/status/flags":
			data = flags
		case r.URL.Path == "/api/v1/targets":
			data = map[string]any{"activeTargets": []any{}}
		case r.URL.Path == "/api/v1/rules":
			data = map[string]any{"groups": []any{}}
		default:
			return nil, false
		}
		return data, true
	})
}

func (f *lookupServer) set(hold chan struct{}, names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = hold
	if names != nil {
		f.names = names
	}
}

func (f *lookupServer) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[path]
}

// within fails the test unless f returns before a generous deadline: a call that waited on the held server would not.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s waited on the server", what)
	}
}

// eventually polls cond, bounded, until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

const namesPath = "/api/v1/label/__name__/values"

// TestNamesServeWhileLookedUpAgain: past the TTL the names found before answer at once, even while the server is
// slow, and one background lookup (however many panels ask meanwhile) replaces them; a lookup started before Forget
// keeps nothing; past StaleFor the caller waits for the server again.
func TestNamesServeWhileLookedUpAgain(t *testing.T) {
	f := &lookupServer{names: []string{"vllm:num_requests_running"}}
	d := &Discovery{Client: f.serve(t)}
	if n, err := d.Names(context.Background()); err != nil || !n.Has("vllm:num_requests_running") {
		t.Fatalf("first lookup: %v, %v", n.Sorted(), err)
	}
	age := func(by time.Duration) {
		d.mu.Lock()
		d.fetched = d.fetched.Add(-by)
		d.mu.Unlock()
	}

	hold := make(chan struct{})
	f.set(hold, "vllm:num_requests_running", "vllm:num_requests_waiting")
	age(DefaultNamesTTL)
	within(t, "Names past its TTL", func() {
		for range 30 { // a refresh's panels
			if n, err := d.Names(context.Background()); err != nil || !n.Has("vllm:num_requests_running") || n.Has("vllm:num_requests_waiting") {
				t.Errorf("stale names: %v, %v; want those found before", n.Sorted(), err)
			}
		}
	})
	eventually(t, "the background lookup asks", func() bool { return f.count(namesPath) == 2 })
	close(hold)
	eventually(t, "the names looked up again serve", func() bool {
		n, err := d.Names(context.Background())
		return err == nil && n.Has("vllm:num_requests_waiting")
	})
	if n := f.count(namesPath); n != 2 {
		t.Errorf("the server was asked for the names %d times, want 2 (one background lookup)", n)
	}

	// Forgotten while a background lookup runs: its answer is dropped, and the next call looks up anew.
	hold = make(chan struct{})
	f.set(hold, "vllm:old_name")
	age(DefaultNamesTTL)
	within(t, "Names past its TTL", func() { _, _ = d.Names(context.Background()) })
	eventually(t, "the background lookup asks", func() bool { return f.count(namesPath) == 3 })
	d.Forget()
	f.set(nil, "vllm:new_name")
	close(hold)
	if n, err := d.Names(context.Background()); err != nil || !n.Has("vllm:new_name") {
		t.Errorf("after Forget: %v, %v; want the names looked up after it", n.Sorted(), err)
	}
	eventually(t, "the background lookup ends", func() bool { return !d.namesLookup.running.Load() })
	if n, _ := d.Names(context.Background()); n.Has("vllm:old_name") {
		t.Error("a lookup started before Forget replaced the names looked up after it")
	}

	// Past StaleFor (a dashboard left closed), the caller waits for an answer: the names may be long gone.
	age(DefaultNamesTTL + StaleFor)
	f.set(nil, "vllm:newest_name")
	if n, err := d.Names(context.Background()); err != nil || !n.Has("vllm:newest_name") {
		t.Errorf("past StaleFor: %v, %v; want the server's names now", n.Sorted(), err)
	}
}

// TestLayoutsServeWhileLookedUpAgain: a layout past the TTL answers at once and is asked again in the background;
// a name never asked is waited for.
func TestLayoutsServeWhileLookedUpAgain(t *testing.T) {
	const bucket = "vllm:e2e_request_latency_seconds_bucket"
	f := &lookupServer{}
	d := &Discovery{Client: f.serve(t)}
	if got, err := d.Layouts(context.Background(), []string{bucket}); err != nil || got[bucket] != "+Inf" {
		t.Fatalf("first lookup: %v, %v", got, err)
	}
	hold := make(chan struct{})
	f.set(hold)
	d.mu.Lock()
	l := d.layouts[bucket]
	l.fetched = l.fetched.Add(-DefaultNamesTTL)
	d.layouts[bucket] = l
	d.mu.Unlock()
	within(t, "Layouts past its TTL", func() {
		if got, err := d.Layouts(context.Background(), []string{bucket}); err != nil || got[bucket] != "+Inf" {
			t.Errorf("stale layout: %v, %v", got, err)
		}
	})
	eventually(t, "the background lookup asks", func() bool { return f.count("/api/v1/query") == 2 })
	close(hold)
	eventually(t, "the layout looked up again serves", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return ageOf(d.layouts[bucket].fetched, time.Now(), d.ttl()) == fresh
	})
	f.set(nil)
	if _, err := d.Layouts(context.Background(), []string{bucket, "vllm:time_to_first_token_seconds_bucket"}); err != nil {
		t.Fatal(err)
	}
	if n := f.count("/api/v1/query"); n != 3 {
		t.Errorf("asked %d times, want 3: a name never asked is asked at once", n)
	}
}

// TestLayoutsAskedApart: a histogram's first layout lookup holds up no other caller. While the server is slow to
// answer it, the names answer, another histogram's layout is asked at once, and a second caller of the same histogram
// waits for the lookup under way instead of asking again; a caller that gives up is not held either.
func TestLayoutsAskedApart(t *testing.T) {
	const ttft, itl = "vllm:time_to_first_token_seconds_bucket", "vllm:inter_token_latency_seconds_bucket"
	f := &lookupServer{names: []string{ttft, itl}}
	d := &Discovery{Client: f.serve(t)}
	if _, err := d.Names(context.Background()); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // a failed check leaves no request held, so the server closes
	f.set(hold)
	layouts := func(names ...string) chan error {
		done := make(chan error, 1)
		go func() {
			got, err := d.Layouts(context.Background(), names)
			if err == nil && len(got) != len(names) {
				err = fmt.Errorf("layouts of %d names, want %d: %v", len(got), len(names), got)
			}
			done <- err
		}()
		return done
	}
	first := layouts(ttft)
	eventually(t, "the first layout lookup asks", func() bool { return f.count("/api/v1/query") == 1 })
	within(t, "Names during a layout lookup", func() {
		if n, err := d.Names(context.Background()); err != nil || !n.Has(ttft) {
			t.Errorf("names during a layout lookup: %v, %v", n.Sorted(), err)
		}
	})
	other := layouts(itl)
	eventually(t, "another histogram's layout is asked beside the first", func() bool { return f.count("/api/v1/query") == 2 })
	again := layouts(ttft)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { _, err := d.Layouts(ctx, []string{ttft}); gaveUp <- err }()
	cancel()
	within(t, "a caller that gave up", func() {
		if err := <-gaveUp; err == nil {
			t.Error("a cancelled caller got an answer while the lookup was held")
		}
	})
	release()
	for _, done := range []chan error{first, other, again} {
		within(t, "the layouts once the server answers", func() {
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	if n := f.count("/api/v1/query"); n != 2 {
		t.Errorf("asked %d layout queries, want 2: one per histogram, shared by its callers", n)
	}
}

// TestHorizonKindServesWhileAskedAgain: past horizonServerTTL the Horizon answers with the server's kind asked
// before while a background lookup asks again; once it answers, a server that changed (it now takes remote write)
// is no longer vouched for.
func TestHorizonKindServesWhileAskedAgain(t *testing.T) {
	f := &lookupServer{version: "3.16.0", flags: prometheusFlags(nil)}
	h := &Horizon{Client: f.serve(t), Jobs: func(context.Context) ([]string, error) { return []string{"vllm"}, nil }}
	now := time.Unix(1_800_000_001, 0)
	if _, known := h.Final(context.Background(), now); !known {
		t.Fatal("a scraping Prometheus's horizon is not known")
	}
	hold := make(chan struct{})
	f.set(hold)
	f.mu.Lock()
	f.flags = prometheusFlags(map[string]string{"web.enable-remote-write-receiver": "true"})
	f.mu.Unlock()
	later := now.Add(horizonServerTTL)
	h.mu.Lock()
	h.readAt = time.Time{} // the horizon itself is read again; its query waits on the held server too
	h.mu.Unlock()
	done := make(chan bool, 1)
	go func() { _, known := h.Final(context.Background(), later); done <- known }()
	eventually(t, "the kind is asked again and the horizon read beside it", func() bool {
		return f.count("/api/v1/status/buildinfo") == 2 && f.count("/api/v1/query") == 2
	})
	close(hold)
	within(t, "the read beside the background lookup", func() {
		if !<-done {
			t.Error("the read beside the background lookup was not known: it should use the kind asked before")
		}
	})
	eventually(t, "the background lookup ends", func() bool { return !h.kindLookup.running.Load() })
	h.mu.Lock()
	h.readAt = time.Time{}
	h.mu.Unlock()
	if _, known := h.Final(context.Background(), later.Add(time.Second)); known {
		t.Error("after the background lookup, a server taking remote write is still vouched for")
	}
}

// TestAgeOf: fresh within the TTL, stale for StaleFor past it, expired after that, without an answer, or when the
// clock went back.
func TestAgeOf(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		fetched time.Time
		now     time.Duration // after at
		want    age
	}{
		{time.Time{}, 0, expired},
		{at, 0, fresh},
		{at, DefaultNamesTTL - time.Millisecond, fresh},
		{at, DefaultNamesTTL, stale},
		{at, DefaultNamesTTL + StaleFor - time.Millisecond, stale},
		{at, DefaultNamesTTL + StaleFor, expired},
		{at, -time.Second, expired},
	} {
		if got := ageOf(tc.fetched, at.Add(tc.now), DefaultNamesTTL); got != tc.want {
			t.Errorf("ageOf(%v, +%v) = %d, want %d", tc.fetched, tc.now, got, tc.want)
		}
	}
}

// TestConfigsAndReplicasServeWhileLookedUpAgain: the KV pool's cache configurations and the replica check, past
// their TTL, answer at once with what was found before while one background lookup asks again; a range reaching
// further past the answer's end than StaleFor, or starting before it, waits for the server.
func TestConfigsAndReplicasServeWhileLookedUpAgain(t *testing.T) {
	f := &lookupServer{blocks: "8192"}
	c := f.serve(t)
	ev := &Evaluator{Client: c, Discovery: &Discovery{Client: c}}
	end := time.Now()
	start := end.Add(-time.Hour)
	configs := func(start, end time.Time) []CacheConfig {
		t.Helper()
		out, err := ev.cacheConfigs(context.Background(), query.Query{}, []string{"vllm:cache_config_info"}, start, end)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	replicas := func() []string { return ev.replicas.notices(context.Background(), c, end) }
	if got := configs(start, end); len(got) != 1 || got[0].NumGPUBlocks != "8192" {
		t.Fatalf("first lookup: %v", got)
	}
	if got := replicas(); len(got) != 1 || !strings.Contains(got[0], "replica") {
		t.Fatalf("first replica check: %v", got)
	}

	hold := make(chan struct{})
	f.set(hold)
	f.mu.Lock()
	f.blocks = "4096"
	f.mu.Unlock()
	ev.configs.mu.Lock()
	for k, a := range ev.configs.answers {
		a.fetched = a.fetched.Add(-DefaultNamesTTL)
		ev.configs.answers[k] = a
	}
	ev.configs.mu.Unlock()
	ev.replicas.mu.Lock()
	ev.replicas.fetched = ev.replicas.fetched.Add(-DefaultNamesTTL)
	ev.replicas.mu.Unlock()
	within(t, "the configurations and replica check past their TTL", func() {
		for range 5 {
			if got := configs(start, end.Add(DefaultNamesTTL)); len(got) != 1 || got[0].NumGPUBlocks != "8192" {
				t.Errorf("stale configurations: %v, want those found before", got)
			}
			if got := replicas(); len(got) != 1 {
				t.Errorf("stale replica notices: %v, want those found before", got)
			}
		}
	})
	eventually(t, "the background lookups ask", func() bool {
		return f.count("/api/v1/series") == 2 && f.count("/api/v1/labels") == 2
	})
	close(hold)
	eventually(t, "the configurations looked up again serve", func() bool {
		got := configs(start, end.Add(DefaultNamesTTL))
		return len(got) == 1 && got[0].NumGPUBlocks == "4096"
	})
	eventually(t, "the replica check ends", func() bool { return !ev.replicas.lookup.running.Load() })
	if n, m := f.count("/api/v1/series"), f.count("/api/v1/labels"); n != 2 || m != 2 {
		t.Errorf("asked for series %d and label names %d times, want 2 each (one background lookup)", n, m)
	}

	f.mu.Lock()
	f.blocks = "2048"
	f.mu.Unlock()
	if got := configs(start.Add(-time.Minute), end); got[0].NumGPUBlocks != "2048" {
		t.Errorf("a range starting before the answer's: %v, want the server's answer now", got)
	}
	if got := configs(start, end.Add(2*DefaultNamesTTL+StaleFor)); got[0].NumGPUBlocks != "2048" {
		t.Errorf("a range ending past StaleFor after the answer's: %v, want the server's answer now", got)
	}
}

// TestEvalLooksUpBesideEachOther: a cold query's lookups do not wait on one another. An SLO attainment per model
// needs the bucket bounds and the histogram's layout, and the server here answers the bounds only once it has been
// asked for the layout; it answers the replica check only once it has been asked the query itself.
func TestEvalLooksUpBesideEachOther(t *testing.T) {
	const bucket = "vllm:time_to_first_token_seconds_bucket"
	layoutAsked, queried := make(chan struct{}), make(chan struct{})
	var once [2]sync.Once
	await := func(r *http.Request, ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-r.Context().Done():
			return false
		case <-time.After(30 * time.Second):
			return false
		}
	}
	c := apiServer(t, func(r *http.Request) (any, bool) {
		switch r.URL.Path {
		case "/api/v1/label/__name__/values":
			return []string{bucket, "vllm:time_to_first_token_seconds_count"}, true
		case "/api/v1/label/job/values":
			return []string{"vllm"}, true
		case "/api/v1/label/instance/values":
			return []string{}, true
		case "/api/v1/label/le/values":
			return []string{"0.25", "0.5", "1", "+Inf"}, await(r, layoutAsked)
		case "/api/v1/query": // Layouts' count by (__name__, le)
			once[0].Do(func() { close(layoutAsked) })
			return map[string]any{"resultType": "vector", "result": []any{}}, true
		case "/api/v1/labels": // the replica check
			return []string{"__name__", "instance"}, await(r, queried)
		case "/api/v1/query_range":
			once[1].Do(func() { close(queried) })
			return map[string]any{"resultType": "matrix", "result": []any{}}, true
		}
		return nil, false
	})
	ev := &Evaluator{Client: c, Discovery: &Discovery{Client: c}, ScrapeInterval: 5 * time.Second}
	threshold := 0.5
	q := query.Query{QueryType: query.TypeLatency, Measure: "slo_attainment", Metric: "ttft", Threshold: &threshold, Window: "5m", GroupBy: query.GroupModel}
	end := time.Now()
	within(t, "a cold SLO attainment", func() {
		if _, err := ev.Eval(context.Background(), q, query.Request{From: end.Add(-time.Hour), To: end, Interval: 15 * time.Second}); err != nil {
			t.Errorf("one lookup waited on another: %v", err)
		}
	})
}
