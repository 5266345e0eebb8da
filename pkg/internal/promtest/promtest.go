// Package promtest starts a real PromQL server on loopback for tests — Debian's Prometheus 2, Prometheus 3 built from
// its Go module, or Debian's VictoriaMetrics (see Engine) — so formulas and simulators are checked against the
// servers' own results rather than our idea of them.
package promtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// Target is one scrape target for the test server.
type Target struct {
	Job         string // job label, shared by every target that names it; empty gives the target a job of its own (vllm-<index>)
	Addr        string // host:port on loopback
	MetricsPath string // defaults to /metrics
	// Labels are target labels, as a relabel rule would leave them (a pod label such as llm-d.ai/role as role).
	Labels map[string]string
}

// Options configures a test server.
type Options struct {
	// Engine is the server to start; the zero value is Prometheus 2.
	Engine         Engine
	Targets        []Target
	ScrapeInterval time.Duration // defaults to 1s
	// DataDir is an existing TSDB directory to serve (for example one made by Backfill); a temp dir when empty.
	// Prometheus only.
	DataDir string
	// OpenMetrics, if set, is OpenMetrics text with timestamps (ending in "# EOF") loaded before Start returns:
	// with promtool into a new TSDB for a Prometheus, through the import API for VictoriaMetrics.
	OpenMetrics string
	// Rules, if set, is a Prometheus rules file the server evaluates every ScrapeInterval (Prometheus only).
	Rules string
	// LatencyOffset is VictoriaMetrics' -search.latencyOffset: the newest samples it leaves out of query answers.
	// Zero means 1ms (VictoriaMetrics refuses 0), so a test sees a scrape as soon as Prometheus would; its
	// default in production is 30s.
	LatencyOffset time.Duration
	// QueryLog, if set, is the file a Prometheus logs every query it answers to (query_log_file: one JSON line each,
	// with its parameters and timings). Prometheus only.
	QueryLog string
	// NoDedup starts ThanosHA's querier without --query.replica-label, so every series comes twice (replica="a"
	// and "b"), as behind a querier nobody told about the HA pair.
	NoDedup bool
}

// Server is a running engine owned by one test; it is stopped by t.Cleanup.
type Server struct {
	URL    string
	Engine Engine
	// Header is what every query must carry: Cortex's tenant (TenantHeader: Tenant), nil elsewhere.
	Header http.Header
	client *http.Client
	// stores are the Prometheus behind a Thanos querier's sidecars, in order (shard="0" first, replica="a" first).
	stores []runningStore
}

// maxImportChunk bounds one VictoriaMetrics import request, well under its -maxInsertRequestSize default (32 MB).
const maxImportChunk = 8 << 20

// Start launches the engine on a free loopback port and waits until it is ready (and, with OpenMetrics, until the
// samples are loaded).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	eng := opts.Engine
	for _, name := range eng.tools() {
		EngineBinary(t, eng, name)
	}
	if opts.ScrapeInterval == 0 {
		opts.ScrapeInterval = time.Second
	}
	if (opts.DataDir != "" || opts.Rules != "" || opts.QueryLog != "") && !eng.IsPrometheus() {
		t.Fatalf("Options.DataDir, Rules and QueryLog are Prometheus's; %s takes its samples through Options.OpenMetrics and evaluates no rules", eng)
	}
	switch eng {
	case ThanosHA, ThanosShards:
		start := startThanosHA
		if eng == ThanosShards {
			start = startThanosShards
		}
		addr, stores := start(t, opts)
		return &Server{URL: "http://" + addr, Engine: eng, client: &http.Client{Timeout: 10 * time.Second}, stores: stores}
	case Cortex:
		return &Server{URL: "http://" + startCortex(t, opts) + "/prometheus", Engine: eng,
			Header: http.Header{TenantHeader: {Tenant}}, client: &http.Client{Timeout: 10 * time.Second}}
	}
	dir := t.TempDir()
	data := opts.DataDir
	if data == "" && opts.OpenMetrics != "" && eng.IsPrometheus() {
		data = backfill(t, eng, opts.OpenMetrics)
	}
	if data == "" {
		data = filepath.Join(dir, "data")
	}
	var args func(addr string) []string
	switch eng {
	case Prometheus2, Prometheus3:
		cfg := filepath.Join(dir, "prometheus.yml")
		text := config(opts, true)
		if opts.Rules != "" {
			rules := filepath.Join(dir, "rules.yml")
			if err := os.WriteFile(rules, []byte(opts.Rules), 0o600); err != nil {
				t.Fatal(err)
			}
			text += "rule_files: [" + strconv.Quote(rules) + "]\n"
		}
		if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		args = func(addr string) []string {
			return []string{
				"--config.file=" + cfg,
				"--storage.tsdb.path=" + data,
				// Backfilled blocks carry old timestamps; a long retention keeps Prometheus from deleting them at start.
				"--storage.tsdb.retention.time=100y",
				"--web.listen-address=" + addr,
				"--log.level=warn",
			}
		}
	case VictoriaMetrics, VictoriaMetrics151:
		offset := opts.LatencyOffset
		if offset <= 0 {
			offset = time.Millisecond
		}
		var scrape []string
		if len(opts.Targets) > 0 {
			cfg := filepath.Join(dir, "promscrape.yml")
			if err := os.WriteFile(cfg, []byte(config(opts, false)), 0o600); err != nil {
				t.Fatal(err)
			}
			scrape = []string{"-promscrape.config=" + cfg}
		}
		args = func(addr string) []string {
			return append([]string{
				"-httpListenAddr=" + addr,
				"-storageDataPath=" + data,
				"-retentionPeriod=100y",
				"-search.latencyOffset=" + offset.String(),
				// Responses are cached per query; backfilled samples arrive after the first queries may have run.
				"-search.disableCache",
				"-loggerLevel=WARN",
			}, scrape...)
		}
	default:
		t.Fatalf("unknown engine %d", int(eng))
	}
	ready := "/-/ready"
	if eng.IsVictoriaMetrics() {
		ready = "/health"
	}
	p := startProc(t, eng.String(), dir, EngineBinary(t, eng, eng.tools()[0]), 1, func(addrs []string) []string { return args(addrs[0]) }, ready)
	s := &Server{URL: "http://" + p.addr(), Engine: eng, client: &http.Client{Timeout: 10 * time.Second}}
	if eng.IsVictoriaMetrics() && opts.OpenMetrics != "" {
		s.importOpenMetrics(t, opts.OpenMetrics)
	}
	return s
}

// config writes the scrape configuration; VictoriaMetrics' strict parser refuses evaluation_interval.
func config(opts Options, prometheus bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n", model.Duration(opts.ScrapeInterval))
	if prometheus {
		fmt.Fprintf(&b, "  evaluation_interval: %s\n", model.Duration(opts.ScrapeInterval))
		if opts.QueryLog != "" {
			fmt.Fprintf(&b, "  query_log_file: %s\n", strconv.Quote(opts.QueryLog))
		}
	}
	b.WriteString("scrape_configs:\n")
	// Targets with a Job share that job, as replicas of one deployment do; the others get a job each.
	type scrapeJob struct {
		name, label, path string
		// groups are the job's static_configs: its targets' addresses by their own labels (as YAML flow maps).
		groups []string
		addrs  map[string][]string
	}
	var jobs []*scrapeJob
	byName := map[string]*scrapeJob{}
	for i, tg := range opts.Targets {
		path := tg.MetricsPath
		if path == "" {
			path = "/metrics"
		}
		name, label := tg.Job, tg.Job
		if name == "" {
			name, label = fmt.Sprintf("vllm-%d", i), "vllm"
		}
		j := byName[name+" "+path]
		if j == nil {
			j = &scrapeJob{name: name, label: label, path: path, addrs: map[string][]string{}}
			byName[name+" "+path] = j
			jobs = append(jobs, j)
		}
		labels := fmt.Sprintf("job_name: %q", label)
		for _, k := range slices.Sorted(maps.Keys(tg.Labels)) {
			labels += fmt.Sprintf(", %s: %q", k, tg.Labels[k])
		}
		if _, ok := j.addrs[labels]; !ok {
			j.groups = append(j.groups, labels)
		}
		j.addrs[labels] = append(j.addrs[labels], strconv.Quote(tg.Addr))
	}
	for _, j := range jobs {
		fmt.Fprintf(&b, "  - job_name: %q\n    metrics_path: %q\n    scrape_timeout: %s\n    static_configs:\n",
			j.name, j.path, model.Duration(opts.ScrapeInterval))
		for _, g := range j.groups {
			fmt.Fprintf(&b, "      - targets: [%s]\n        labels: {%s}\n", strings.Join(j.addrs[g], ", "), g)
		}
	}
	if len(jobs) == 0 {
		b.WriteString("  []\n")
	}
	return b.String()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Backfill writes OpenMetrics text (with timestamps, ending in "# EOF") into a new TSDB directory with Prometheus 2's
// promtool, so a test can run PromQL over exactly the samples it also feeds to our own code. For other engines set
// Options.OpenMetrics instead.
func Backfill(t testing.TB, openMetrics string) string {
	t.Helper()
	return backfill(t, Prometheus2, openMetrics)
}

func backfill(t testing.TB, eng Engine, openMetrics string) string {
	t.Helper()
	bin := EngineBinary(t, eng, "promtool")
	dir := t.TempDir()
	in := filepath.Join(dir, "input.om")
	if err := os.WriteFile(in, []byte(openMetrics), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	out, err := exec.Command(bin, "tsdb", "create-blocks-from", "openmetrics", in, data).CombinedOutput() // #nosec G204 -- test paths
	if err != nil {
		t.Fatalf("%s promtool backfill: %v\n%s", eng, err, out)
	}
	return data
}

// importOpenMetrics loads OpenMetrics text into VictoriaMetrics through /api/v1/import/prometheus (text format with
// millisecond timestamps) and flushes, so the samples are searchable when Start returns. Like promtool it leaves out
// the _created lines of counters, histograms and summaries.
func (s *Server) importOpenMetrics(t testing.TB, openMetrics string) {
	t.Helper()
	sc, err := exposition.Parse([]byte(openMetrics), exposition.ParseOptions{Format: exposition.FormatOpenMetrics})
	if err != nil {
		t.Fatalf("import into %s: %v", s.Engine, err)
	}
	var body bytes.Buffer
	post := func() {
		if body.Len() == 0 {
			return
		}
		resp, err := s.client.Post(s.URL+"/api/v1/import/prometheus", "text/plain", &body)
		if err != nil {
			t.Fatalf("import into %s: %v", s.Engine, err)
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("import into %s: %s: %s", s.Engine, resp.Status, msg)
		}
		body.Reset()
	}
	n := 0
	for _, f := range sc.Families {
		for _, smp := range f.Samples {
			if smp.Name == f.Name+"_created" { // only counters, histograms and summaries take _created into the family
				continue
			}
			if !smp.HasTimestamp {
				t.Fatalf("import into %s: sample %s has no timestamp", s.Engine, smp.Name)
			}
			body.WriteString(smp.Name)
			if len(smp.Labels) > 0 {
				body.WriteByte('{')
				for i, l := range smp.Labels {
					if i > 0 {
						body.WriteByte(',')
					}
					body.WriteString(l.Name)
					body.WriteString(`="`)
					body.WriteString(escapeLabel(l.Value))
					body.WriteByte('"')
				}
				body.WriteByte('}')
			}
			body.WriteByte(' ')
			body.WriteString(formatValue(smp.Value))
			body.WriteByte(' ')
			body.WriteString(strconv.FormatInt(smp.TimestampMs, 10))
			body.WriteByte('\n')
			n++
			if body.Len() > maxImportChunk {
				post()
			}
		}
	}
	post()
	resp, err := s.client.Get(s.URL + "/internal/force_flush")
	if err != nil {
		t.Fatalf("flush %s: %v", s.Engine, err)
	}
	_ = resp.Body.Close()
	if n == 0 {
		t.Fatalf("import into %s: no samples", s.Engine)
	}
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(v string) string { return labelEscaper.Replace(v) }

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
}

type queryData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

func (s *Server) get(ctx context.Context, path string, params url.Values) (queryData, error) {
	raw, err := s.data(ctx, path, params)
	if err != nil {
		return queryData{}, err
	}
	var d queryData
	if err := json.Unmarshal(raw, &d); err != nil {
		return queryData{}, err
	}
	return d, nil
}

// data is the data member of a successful answer to a GET of one of the server's API paths.
func (s *Server) data(ctx context.Context, path string, params url.Values) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path+"?"+params.Encode(), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range s.Header {
		req.Header[k] = v
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w (body %q)", path, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s %s: %s: %s", s.Engine, path, r.ErrorType, r.Error)
	}
	return r.Data, nil
}

// TargetHealth is one active scrape target as the server's /api/v1/targets reports it.
type TargetHealth struct {
	Labels             map[string]string `json:"labels"`
	Health             string            `json:"health"`
	LastError          string            `json:"lastError"`
	LastScrapeDuration float64           `json:"lastScrapeDuration"` // seconds
}

// Targets lists the server's active scrape targets with their health (a Prometheus's /api/v1/targets).
func (s *Server) Targets(ctx context.Context) ([]TargetHealth, error) {
	raw, err := s.data(ctx, "/api/v1/targets", url.Values{"state": {"active"}})
	if err != nil {
		return nil, err
	}
	var d struct {
		ActiveTargets []TargetHealth `json:"activeTargets"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("decode /api/v1/targets: %w", err)
	}
	return d.ActiveTargets, nil
}

// Query evaluates an instant query at the given time.
func (s *Server) Query(ctx context.Context, expr string, at time.Time) (model.Vector, error) {
	d, err := s.get(ctx, "/api/v1/query", url.Values{"query": {expr}, "time": {formatTime(at)}})
	if err != nil {
		return nil, err
	}
	switch d.ResultType {
	case "vector":
		var v model.Vector
		err := json.Unmarshal(d.Result, &v)
		return v, err
	case "scalar":
		var sc model.Scalar
		if err := json.Unmarshal(d.Result, &sc); err != nil {
			return nil, err
		}
		return model.Vector{{Value: sc.Value, Timestamp: sc.Timestamp}}, nil
	default:
		return nil, fmt.Errorf("query %q: unexpected result type %s", expr, d.ResultType)
	}
}

// QueryRange evaluates a range query.
func (s *Server) QueryRange(ctx context.Context, expr string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	d, err := s.get(ctx, "/api/v1/query_range", url.Values{
		"query": {expr}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	})
	if err != nil {
		return nil, err
	}
	var m model.Matrix
	err = json.Unmarshal(d.Result, &m)
	return m, err
}

// WaitFor polls an instant query at the current time until ok accepts the result or the timeout passes.
func (s *Server) WaitFor(t testing.TB, expr string, timeout time.Duration, ok func(model.Vector) bool) model.Vector {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var (
		v   model.Vector
		err error
	)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		v, err = s.Query(ctx, expr, time.Now())
		cancel()
		if err == nil && ok(v) {
			return v
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("query %q did not reach the expected result within %s: last result %v, error %v", expr, timeout, v, err)
	return nil
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// Values are series compared with Prometheus: series key (see Key) → timestamp (ms) → value.
type Values map[string]map[int64]float64

// Key identifies a label set by the labels in keep only, so ours and Prometheus's extra labels line up.
func Key(l map[string]string, keep []string) string {
	parts := make([]string, 0, len(keep))
	for _, k := range keep {
		if v, ok := l[k]; ok && v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// CompareRange evaluates expr as a range query from..to (already aligned to step) and checks it against ours in
// both directions: the same series, a value wherever Prometheus has a finite one, and no extra values; values
// agree within tol relative. It returns how many values were compared and fails the test if none were.
func (s *Server) CompareRange(t testing.TB, expr string, from, to time.Time, step time.Duration, ours Values, keep []string, tol float64) int {
	t.Helper()
	m, err := s.QueryRange(context.Background(), expr, from, to, step)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	theirs := Values{}
	for _, series := range m {
		labels := map[string]string{}
		for k, v := range series.Metric {
			labels[string(k)] = string(v)
		}
		k := Key(labels, keep)
		for _, p := range series.Values {
			if v := float64(p.Value); !math.IsNaN(v) && !math.IsInf(v, 0) {
				if theirs[k] == nil {
					theirs[k] = map[int64]float64{}
				}
				theirs[k][int64(p.Timestamp)] = v
			}
		}
	}
	compared := 0
	for k, want := range theirs {
		got, ok := ours[k]
		if !ok {
			t.Errorf("series %s: Prometheus has it, ours does not", k)
			continue
		}
		for ts, w := range want {
			g, ok := got[ts]
			switch {
			case !ok:
				t.Errorf("series %s at %s: Prometheus %v, ours has no value", k, time.UnixMilli(ts).UTC().Format(time.TimeOnly), w)
			case g != w && math.Abs(g-w) > tol*math.Max(math.Abs(g), math.Abs(w)):
				t.Errorf("series %s at %s: ours %v, Prometheus %v", k, time.UnixMilli(ts).UTC().Format(time.TimeOnly), g, w)
			default:
				compared++
			}
		}
		if extra := len(got) - len(want); extra > 0 {
			t.Errorf("series %s: ours has %d values Prometheus does not", k, extra)
		}
	}
	for k := range ours {
		if _, ok := theirs[k]; !ok {
			t.Errorf("series %s: ours has it, Prometheus does not", k)
		}
	}
	if compared == 0 {
		t.Fatalf("nothing compared for %s", expr)
	}
	return compared
}
