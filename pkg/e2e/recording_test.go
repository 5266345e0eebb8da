package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// recordingTolerance is how far a rate read from a recording rule may be from the one computed at the step: the
// rule evaluated it up to one evaluation interval (1 s here) before the step, a sum of recorded series up to one more
// per import it went through, over the same samples (scrapes are 5 s apart and 2 s off the steps), so only the
// extrapolation to the window's edges moves. Most rates move by under 1 % of a 1 m window; a bucket counter that
// starts inside the window is extrapolated only to zero at the start, so its end moves the whole second of about
// 57: at most 1.75 % (measured 1.71 %).
const recordingTolerance = 0.02

// TestRecordingRulesMatchComputedRates: the generated recording rules, evaluated by Prometheus's own rule importer over
// the same samples, give every rate-reading catalog entry the numbers it computes without them, at both recorded
// windows, per engine, per endpoint, per model and for the fleet; the data source reads the recorded series (no
// rate() left for them) as soon as the server holds them: the sums over endpoints, the sums per endpoint and the
// latency quantiles per endpoint and per engine where the query asks what they hold.
func TestRecordingRulesMatchComputedRates(t *testing.T) {
	t.Parallel() // see doc.go
	if testing.Short() {
		t.Skip("starts Prometheus twice")
	}
	engine := promtest.EnginesOf(t, promtest.Prometheus2)[0]
	fleet := map[string][]string{}
	for _, f := range catalogFleet {
		switch f.endpoint {
		case "vllm-v1", "vllm-v0", "dynamo-frontend", "vllm-ascend":
			fleet[f.endpoint] = f.args
		}
	}
	// The run lies inside one of the importer's 2 h blocks: it evaluates each block apart, from the group's offset
	// into the block's first second, so at a block's start the newest recorded value is up to 2 s old, and a
	// bucket counter that starts inside the window (extrapolated to zero at the start) moved 2.1 % there.
	run := newSimRunFrom(t, fleet, time.Now().Add(-3*time.Hour).Truncate(2*time.Hour).Add(2*time.Second), 12*time.Minute, 5*time.Second)
	raw := promtest.Backfill(t, strings.ReplaceAll(run.openMetrics(), `{endpoint="`, `{instance="`))
	computed := promtest.Start(t, promtest.Options{Engine: engine, DataDir: copyTSDB(t, raw)})

	// Prometheus's rule importer evaluates the shipped rules (every second) over the raw samples into new blocks: the
	// rates first, then, from a server holding them, their sums per endpoint, then the sums over endpoints (of the sums
	// per endpoint) and the quantiles (per engine of the rates, per endpoint of the sums per endpoint): the importer
	// cannot evaluate a rule over another's series in one pass; Prometheus evaluates them in order within a group at
	// the same time.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	data := copyTSDB(t, raw)
	importRules := func(from *promtest.Server, set promapi.RuleSet) {
		rules := filepath.Join(t.TempDir(), "rules.yml")
		if err := os.WriteFile(rules, []byte(promapi.RuleGroupsOf(time.Second, 0, set)), 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "recorded")
		cmd := exec.CommandContext(ctx, promtest.EngineBinary(t, engine, "promtool"), "tsdb", "create-blocks-from", "rules", // #nosec G204 -- test paths
			"--start="+strconv.FormatInt(run.start.Unix(), 10), "--end="+strconv.FormatInt(run.end.Unix(), 10),
			"--url="+from.URL, "--eval-interval=1s", "--output-dir="+out, rules)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool create-blocks-from rules: %v\n%s", err, b)
		}
		blocks, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			if err := os.CopyFS(filepath.Join(data, b.Name()), os.DirFS(filepath.Join(out, b.Name()))); err != nil {
				t.Fatal(err)
			}
		}
	}
	importRules(computed, promapi.RateRules)
	importRules(promtest.Start(t, promtest.Options{Engine: engine, DataDir: copyTSDB(t, data)}), promapi.EngineSumRules)
	importRules(promtest.Start(t, promtest.Options{Engine: engine, DataDir: copyTSDB(t, data)}), promapi.DerivedRules)
	recorded := promtest.Start(t, promtest.Options{Engine: engine, DataDir: data})

	evaluator := func(s *promtest.Server) *promapi.Evaluator {
		c := &promapi.Client{BaseURL: s.URL, HTTP: &http.Client{Timeout: 30 * time.Second}}
		return &promapi.Evaluator{Client: c, Discovery: &promapi.Discovery{Client: c, Lookback: 24 * time.Hour}, ScrapeInterval: 5 * time.Second}
	}
	plain, fast := evaluator(computed), evaluator(recorded)
	// both answers q without the rules (want) and with them (got), from the first step whose rate window lies a
	// minute inside the run: in a window still filling, a counter's rate is extrapolated over the few samples held,
	// and a sum over endpoints, recorded from three imports' series each up to a second older than the step, moved
	// 2.2 % at a 5m window's second minute.
	both := func(t *testing.T, q query.Query) (want, got *promapi.Answer) {
		t.Helper()
		window := time.Minute
		if q.Window != "" {
			w, err := q.WindowDuration()
			if err != nil {
				t.Fatal(err)
			}
			window = max(window, w)
		}
		req := query.Request{From: run.start.Add(window + time.Minute), To: run.end, Interval: 10 * time.Second}
		qctx, qcancel := context.WithTimeout(ctx, time.Minute)
		defer qcancel()
		want, err := plain.Eval(qctx, q, req)
		if err != nil {
			t.Fatal(err)
		}
		got, err = fast.Eval(qctx, q, req)
		if err != nil {
			t.Fatalf("%v\n%s", err, ansPromQL(got))
		}
		return want, got
	}
	compared, read := 0, 0
	levels := map[string]int{}
	quantileRead := regexp.MustCompile(`:rate[0-9a-z]+:p[0-9]+_(endpoint|engine)\b`)
	for _, e := range measure.Catalog {
		if !measure.ReadsRates(e.Outputs) || (query.Query{QueryType: e.Type, Measure: e.Name}).Composed() {
			continue
		}
		// Per engine (the per-series rates, the latency quantiles recorded), per endpoint (their sums per endpoint, the
		// latency quantiles recorded), per model and for the fleet (their sums over endpoints, where a model's
		// endpoints answer under one name).
		for _, group := range []query.Group{query.GroupEngine, query.GroupEndpoint, query.GroupModel, query.GroupFleet} {
			q := query.Query{QueryType: e.Type, Measure: e.Name, GroupBy: group}
			if e.Type == query.TypeLatency {
				threshold := 0.3
				q.Metric, q.Threshold = "ttft", &threshold
				if group == query.GroupEngine || group == query.GroupEndpoint {
					q.Quantiles = promapi.RecordedQuantiles // the default quantiles are computed there, from the recorded rates
				}
			}
			for _, w := range promapi.RecordedWindows {
				q.Window = w.String()
				t.Run(fmt.Sprintf("%s/%s/%s/%s", e.Type, e.Name, group, q.Window), func(t *testing.T) {
					want, got := both(t, q)
					if strings.Contains(want.PromQL(), "rate(") {
						// Only bucket rates at a window the rules record no buckets at are computed.
						computed := computedRate.FindAllStringSubmatch(got.PromQL(), -1)
						for _, m := range computed {
							if name := m[1] + m[2]; !strings.HasSuffix(name, "_bucket") || slices.Contains(promapi.BucketWindows, w) {
								t.Errorf("recorded rates held, but the PromQL computes rate(%s):\n%s", name, got.PromQL())
							}
						}
						if len(computed) == 0 && !strings.Contains(got.PromQL(), promapi.RecordedPrefix) {
							t.Errorf("recorded rates held, but the PromQL reads none:\n%s", got.PromQL())
						}
						read++
						for _, level := range []string{":sum_endpoints", ":sum_engines"} {
							if strings.Contains(got.PromQL(), level) {
								levels[level]++
							}
						}
						if m := quantileRead.FindStringSubmatch(got.PromQL()); m != nil {
							levels["quantiles per "+m[1]]++
						}
					}
					worst := 0.0
					compared += compareOutputs(t, want.Result.Outputs, got.Result.Outputs, 0, func(_ string, a, b float64) bool {
						d := math.Abs(a-b) / max(math.Abs(a), math.Abs(b), 1e-9)
						worst = max(worst, d)
						return d <= recordingTolerance || math.Abs(a-b) < 1e-9
					})
					if t.Failed() {
						t.Logf("computed:\n%s\nrecorded:\n%s", want.PromQL(), got.PromQL())
					}
					t.Logf("worst relative difference %.4f", worst)
				})
			}
		}
	}
	// The DP-balance scores the rules record per endpoint, read where held, against the scores computed from the
	// gauges (the rule evaluates the same expression; a gauge is the scrape before the step either way).
	for _, b := range promapi.RecordedBalanceScores {
		q := query.Query{QueryType: query.TypeDPBalance, Measure: b.Measure, Score: b.Score, GroupBy: query.GroupEndpoint}
		t.Run(fmt.Sprintf("dp_balance/%s/%s", b.Measure, b.Score), func(t *testing.T) {
			want, got := both(t, q)
			if len(want.Result.Outputs) > 0 && !strings.Contains(got.PromQL(), promapi.BalanceScoreName(b)) {
				t.Errorf("the recorded score held, but the PromQL computes it:\n%s", got.PromQL())
			}
			if strings.Contains(got.PromQL(), promapi.BalanceScoreName(b)) {
				levels["balance scores"]++
			}
			compared += compareOutputs(t, want.Result.Outputs, got.Result.Outputs, 0, func(_ string, a, b float64) bool {
				return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1)
			})
		})
	}
	if compared == 0 || read == 0 || levels[":sum_endpoints"] == 0 || levels["balance scores"] == 0 || levels[":sum_engines"] == 0 ||
		levels["quantiles per endpoint"] == 0 || levels["quantiles per engine"] == 0 {
		t.Fatalf("compared %d values over %d queries reading recorded rates, by level read %v", compared, read, levels)
	}
	t.Logf("compared %d values over %d queries reading recorded rates, by level read %v", compared, read, levels)
}

// computedRate finds the sample names generated PromQL takes rate() of, in either of the ways it writes a selector.
var computedRate = regexp.MustCompile(`rate\((?:\{__name__="([^"]+)"|([a-zA-Z_:][a-zA-Z0-9_:]*))`)

// copyTSDB copies a TSDB directory made by promtest.Backfill, so two servers can each lock their own.
func copyTSDB(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return dst
}
