// Command inferscope-try drives the built data source executable the way Grafana does (gRPC, the plugin
// handshake, instance settings, a health check and one QueryData request) against vLLM /metrics endpoints and
// prints the answers: the README's "Try it without Docker".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// defaultQueries are what a newcomer wants to see first: the minimal dashboard's panels and the diagnosis.
var defaultQueries = []string{
	`{"queryType":"kv_cache_usage"}`,
	`{"queryType":"throughput","measure":"generation_tokens"}`,
	`{"queryType":"latency","metric":"ttft","quantiles":[0.95]}`,
	`{"queryType":"queue"}`,
	`{"queryType":"diagnosis"}`,
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "inferscope-try:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inferscope-try", flag.ContinueOnError)
	fs.SetOutput(stderr)
	exe := fmt.Sprintf("%s_%s_%s", harness.DatasourceExecutable, runtime.GOOS, runtime.GOARCH)
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	executable := fs.String("datasource", filepath.Join("dist", filepath.FromSlash(exe)), "the built data source executable (go tool mage buildPluginsLocal)")
	var endpoints, queries listFlag
	fs.Var(&endpoints, "endpoint", "a vLLM /metrics URL to scrape (repeat for more; default http://127.0.0.1:8000/metrics)")
	fs.Var(&queries, "query", "a query model as the README's Queries section describes it (repeat for more; default: KV usage, generated tokens/s, TTFT p95, queue, diagnosis)")
	wait := fs.Duration("wait", time.Minute, "how long to wait for the first scrapes to give data")
	rng := fs.Duration("range", 5*time.Minute, "the queries' time range, ending now")
	scrape := fs.Duration("scrape-interval", time.Second, "the data source's scrapeInterval")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; flags: -endpoint, -query, -wait, -range, -datasource", fs.Args())
	}
	if len(endpoints) == 0 {
		endpoints = listFlag{"http://127.0.0.1:8000/metrics"}
	}
	if len(queries) == 0 {
		queries = defaultQueries
	}
	models := make([]json.RawMessage, len(queries))
	for i, q := range queries {
		if !json.Valid([]byte(q)) {
			return fmt.Errorf("-query %q is not JSON", q)
		}
		models[i] = json.RawMessage(q)
	}
	if _, err := os.Stat(*executable); err != nil {
		return fmt.Errorf("%s is missing: build the backends first (go tool mage buildPluginsLocal): %w", *executable, err)
	}

	eps := make([]map[string]string, len(endpoints))
	for i, u := range endpoints {
		eps[i] = map[string]string{"url": u}
	}
	pc, err := harness.NewDataSourceContext(harness.DataSource{
		UID: "inferscope-try", Name: "vLLM (inferscope-try)",
		JSONData: map[string]any{"mode": "direct", "endpoints": eps, "scrapeInterval": scrape.String()},
	}, harness.User("Viewer"))
	if err != nil {
		return err
	}
	p, err := harness.Launch(*executable)
	if err != nil {
		return err
	}
	defer p.Stop()

	ctx, cancel := context.WithTimeout(ctx, *wait+time.Minute)
	defer cancel()
	health, err := p.CheckHealth(ctx, pc) // creates the instance, which starts scraping
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	fmt.Fprintf(stdout, "Save & test: %s\n%s\n\n", health.Status, strings.TrimSpace(health.Message))

	// Rates need a few scrapes: poll once per scrape interval until every query has a value, up to -wait.
	var answer *backend.QueryDataResponse
	deadline := time.Now().Add(*wait)
	for {
		q := make([]harness.Query, len(models))
		now := time.Now()
		for i, m := range models {
			q[i] = harness.Query{RefID: refID(i), JSON: []byte(m), From: now.Add(-*rng), To: now, Interval: *scrape}
		}
		if answer, err = p.Query(ctx, pc, q...); err != nil {
			return fmt.Errorf("query: %w", err)
		}
		if complete(answer, len(models)) || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(*scrape):
		}
	}
	for i, m := range models {
		fmt.Fprintf(stdout, "%s %s\n", refID(i), m)
		printResponse(stdout, answer.Responses[refID(i)])
		fmt.Fprintln(stdout)
	}
	return nil
}

func refID(i int) string { return string(rune('A'+i%26)) + strings.Repeat("'", i/26) }

// complete reports whether every query answered without error and with at least one value.
func complete(r *backend.QueryDataResponse, n int) bool {
	for i := 0; i < n; i++ {
		d := r.Responses[refID(i)]
		if d.Error != nil || len(rows(d)) == 0 {
			return false
		}
	}
	return true
}

// rows renders a response as one line per series (its last value) or per table row.
func rows(d backend.DataResponse) []string {
	var out []string
	for _, f := range d.Frames {
		if len(f.Fields) == 0 {
			continue // an empty answer (no series yet) is a frame without fields
		}
		timeSeries := f.Fields[0].Type() == data.FieldTypeTime || f.Fields[0].Type() == data.FieldTypeNullableTime
		if !timeSeries || f.Meta != nil && f.Meta.PreferredVisualization == data.VisTypeTable {
			for r := 0; r < f.Rows(); r++ {
				var cells []string
				for _, fld := range f.Fields {
					v, _ := fld.ConcreteAt(r)
					cells = append(cells, fmt.Sprintf("%s=%v", fld.Name, v))
				}
				out = append(out, strings.Join(cells, "  "))
			}
			continue
		}
		for _, fld := range f.Fields[1:] {
			last, ok := lastValue(fld)
			if !ok {
				continue
			}
			unit := ""
			if fld.Config != nil && fld.Config.Unit != "" {
				unit = " (" + fld.Config.Unit + ")"
			}
			out = append(out, fmt.Sprintf("%-40s %s = %.4g%s", fld.Name+labels(fld.Labels), "last", last, unit))
		}
	}
	return out
}

func lastValue(f *data.Field) (float64, bool) {
	for i := f.Len() - 1; i >= 0; i-- {
		v, ok := f.ConcreteAt(i)
		if !ok {
			continue
		}
		if x, ok := v.(float64); ok && !math.IsNaN(x) {
			return x, true
		}
	}
	return 0, false
}

func labels(l data.Labels) string {
	if len(l) == 0 {
		return ""
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func printResponse(w io.Writer, d backend.DataResponse) {
	if d.Error != nil {
		fmt.Fprintf(w, "  error: %v\n", d.Error)
		return
	}
	for _, f := range d.Frames {
		if f.Meta != nil {
			for _, n := range f.Meta.Notices {
				fmt.Fprintf(w, "  notice: %s\n", n.Text)
			}
		}
	}
	rs := rows(d)
	if len(rs) == 0 {
		fmt.Fprintln(w, "  (no data yet)")
	}
	for _, r := range rs {
		fmt.Fprintln(w, "  "+r)
	}
}
