package datasource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// stampedBodies are n simulated servers' expositions (seeds 1 … n) at ticks 0 … ticks-1, step apart from t0, each
// sample carrying its tick's time as an explicit timestamp: whoever scrapes a body, whenever, records the same
// points.
func stampedBodies(t *testing.T, n, ticks int, t0 time.Time, step time.Duration) [][][]byte {
	t.Helper()
	out := make([][][]byte, n)
	for i := range out {
		cfg := sim.Default()
		cfg.Seed = int64(i + 1)
		f, err := sim.NewFleet(cfg, t0)
		if err != nil {
			t.Fatal(err)
		}
		for k := range ticks {
			f.AdvanceTo(time.Duration(k) * step)
			var buf bytes.Buffer
			if err := f.WriteExposition(&buf); err != nil {
				t.Fatal(err)
			}
			ms := " " + strconv.FormatInt(t0.Add(time.Duration(k)*step).UnixMilli(), 10)
			var b bytes.Buffer
			for line := range bytes.Lines(buf.Bytes()) {
				line = bytes.TrimRight(line, "\n")
				b.Write(line)
				if len(line) > 0 && line[0] != '#' {
					b.WriteString(ms)
				}
				b.WriteByte('\n')
			}
			out[i] = append(out[i], b.Bytes())
		}
	}
	return out
}

// dataOf is a response's frames without their meta (notices differ: the static fleet reports its scaled-away
// endpoints down), as JSON.
func dataOf(t *testing.T, r backend.DataResponse) string {
	t.Helper()
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	var out []string
	for _, f := range r.Frames {
		c := *f
		c.Meta = nil
		b, err := json.Marshal(data.Frames{&c})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return fmt.Sprint(out)
}

// TestChangingFleetAnswersAsAStaticFleetOnTheSameSamples scales a fleet 4 → 16 → 2 behind each discovery source and,
// beside it, scrapes the same 16 servers from a static configuration listing all of them (a server scaled away
// answers 503 there). Each server serves, tick after tick, a simulated exposition stamped with the tick's time, and
// the test scrapes both data sources once per tick, so both record the same samples. Fleet queries over the whole
// range, across both scale events, must answer the same: discovery keeps the departed endpoints' history and
// scrapes a new one from its first tick. The ticks lie two hours back, so what each data source records at the
// wall-clock time of a scrape (up, the static fleet's staleness markers for a failed scrape) falls outside the
// compared range.
func TestChangingFleetAnswersAsAStaticFleetOnTheSameSamples(t *testing.T) {
	const perPhase, step = 10, 5 * time.Second
	phases := []int{4, 16, 2}
	ticks := perPhase * len(phases)
	t0 := time.Now().Add(-2 * time.Hour).Truncate(time.Minute)
	bodies := stampedBodies(t, 16, ticks, t0, step)
	var tick, active atomic.Int64
	port := loopbackFleet(t, 16, func(i int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path != "/metrics":
				http.NotFound(w, r)
			case int64(i) >= active.Load():
				http.Error(w, "scaled away", http.StatusServiceUnavailable)
			default:
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				_, _ = w.Write(bodies[i][tick.Load()])
			}
		})
	})
	sources := fleetSources(port)
	for _, kind := range discoverySources {
		t.Run(kind, func(t *testing.T) {
			src, set := sources[kind](t)
			nameOf := func(i int) string { return fmt.Sprintf("127.0.0.%d:%d", i+1, port) }
			if src.Type == discovery.TypeKubernetes {
				nameOf = func(i int) string { return fmt.Sprintf("vllm-%02d", i) }
			}
			static := make([]map[string]string, 16)
			for i := range static {
				static[i] = map[string]string{"name": nameOf(i), "url": fmt.Sprintf("http://127.0.0.%d:%d/metrics", i+1, port)}
			}
			common := map[string]any{"mode": "direct", "scrapeInterval": "5s", "scrapeTimeout": "5s", "retention": "24h"}
			withDiscovery, withStatic := map[string]any{"discovery": []discovery.Source{src}, "discoveryInterval": "1h"}, map[string]any{"endpoints": static}
			for k, v := range common {
				withDiscovery[k], withStatic[k] = v, v
			}
			tick.Store(0)
			active.Store(int64(phases[0]))
			set(phases[0])
			jd, _ := json.Marshal(withDiscovery)
			js, _ := json.Marshal(withStatic)
			d := instance(t, backend.DataSourceInstanceSettings{UID: "same-samples-discovery-" + kind, JSONData: jd})
			s := instance(t, backend.DataSourceInstanceSettings{UID: "same-samples-static-" + kind, JSONData: js})
			// scrape is one round of the data source's scrapes now: Save & test scrapes every endpoint (after a
			// discovery round), whatever its scrape interval.
			scrape := func(ds *Datasource) {
				if _, err := ds.CheckHealth(context.Background(), &backend.CheckHealthRequest{}); err != nil {
					t.Fatal(err)
				}
			}
			for p, n := range phases {
				tick.Store(int64(p * perPhase))
				active.Store(int64(n))
				set(n)
				want := make([]string, n)
				for i := range want {
					want[i] = nameOf(i)
				}
				slices.Sort(want)
				// The discovery data source has the new fleet (a Kubernetes watch delivers it a moment later) and has
				// scraped it at this tick; then the static one scrapes the same tick.
				for deadline := time.Now().Add(time.Minute); ; {
					scrape(d)
					up, _, _ := listed(t, d)
					if slices.Equal(up, want) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("fleet of %d: up %v", n, up)
					}
				}
				scrape(s)
				for k := 1; k < perPhase; k++ {
					tick.Store(int64(p*perPhase + k))
					scrape(d)
					scrape(s)
				}
			}
			_, gone, _ := listed(t, d)
			if len(gone) != 14 {
				t.Errorf("%d endpoints gone, want 14: %v", len(gone), gone)
			}
			tr := backend.TimeRange{From: t0, To: t0.Add(time.Duration(ticks-1) * step)}
			queries := []string{
				`{"queryType":"raw","metric":"vllm:num_requests_running"}`,
				`{"queryType":"throughput"}`,
				`{"queryType":"throughput","groupBy":"fleet"}`,
				`{"queryType":"queue","groupBy":"fleet"}`,
				`{"queryType":"kv_cache_usage"}`,
				`{"queryType":"latency","metric":"ttft","quantiles":[0.5,0.99],"groupBy":"fleet"}`,
				`{"queryType":"capacity","groupBy":"fleet"}`,
			}
			for _, q := range queries {
				req := &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A", JSON: []byte(q), Interval: step,
					MaxDataPoints: 1000, TimeRange: tr}}}
				dr, err := d.QueryData(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				sr, err := s.QueryData(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				got, want := dataOf(t, dr.Responses["A"]), dataOf(t, sr.Responses["A"])
				if got != want {
					t.Errorf("%s: discovery answers\n%.2000s\nstatic answers\n%.2000s", q, got, want)
				}
				if q == queries[0] {
					// Every endpoint that ever served has its own series over the range.
					if n := len(dr.Responses["A"].Frames); n != 16 {
						series := 0
						for _, f := range dr.Responses["A"].Frames {
							series += len(f.Fields) - 1
						}
						if series != 16 {
							t.Errorf("raw query: %d frames, %d series; want 16 endpoints' series", n, series)
						}
					}
				}
			}
		})
	}
}
