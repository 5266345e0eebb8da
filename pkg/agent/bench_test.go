package agent

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/profilerconfig"
	"github.com/inferscope/inferscope-vllm/pkg/symbols"
)

// BenchmarkMetricEnable compares one metric_enable switch written locally (the shared-file mode) with the same
// switch through the agent's HTTP API on loopback (token check, rate limit, audit line, JSON both ways).
func BenchmarkMetricEnable(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "ms_service_profiler_config.json")
	if err := os.WriteFile(path, []byte("{\n  \"enable\": 0,\n  \"metric_enable\": 0\n}\n"), 0o640); err != nil {
		b.Fatal(err)
	}
	b.Run("local", func(b *testing.B) {
		l, err := profilerconfig.NewAllowListOf(profilerconfig.Entry{Path: path})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			if _, err := l.SetMetricEnable(path, i%2 == 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("agent", func(b *testing.B) {
		srv, err := New(Config{Token: testToken, ProfilerConfig: path, VLLM: "http://127.0.0.1:1", Rate: 1e9, Burst: 1 << 30,
			Audit: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(srv.Handler())
		defer ts.Close()
		for i := 0; b.Loop(); i++ {
			req, _ := http.NewRequest("PUT", ts.URL+PathMetricEnable, strings.NewReader(`{"value":`+[]string{"1", "0"}[i%2]+`}`))
			req.Header.Set("Authorization", "Bearer "+testToken)
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != http.StatusOK {
				b.Fatal(err, res)
			}
			res.Body.Close()
		}
	})
}

// BenchmarkSymbolsCheck parses and checks a symbols file of 200 entries, ten times the shipped one's size.
func BenchmarkSymbolsCheck(b *testing.B) {
	var sb strings.Builder
	for i := range 200 {
		sb.WriteString("- symbol: vllm.v1.engine.core:EngineCore.step" + string(rune('a'+i%26)) + "\n  min_version: \"0.9.1\"\n  metrics:\n")
		sb.WriteString("    - name: engine:step" + strings.Repeat("x", i%7) + ":" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "\n      type: timer\n")
	}
	doc := []byte(sb.String())
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		entries, err := symbols.Parse(doc)
		if err != nil {
			b.Fatal(err)
		}
		_ = symbols.Check(entries, "0.11.0", map[string]bool{})
	}
}

// BenchmarkTraceListing lists a directory of 50 000 trace files (the newest MaxTraces are kept in a bounded heap,
// the directory read in batches of TraceListBatch).
func BenchmarkTraceListing(b *testing.B) {
	dir := b.TempDir()
	manyTraces(b, dir, 50_000)
	td, err := pinTraceDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer td.root.Close()
	b.ReportAllocs()
	for b.Loop() {
		l, err := td.list(MaxTraces)
		if err != nil || len(l.Traces) != MaxTraces {
			b.Fatal(err, len(l.Traces))
		}
	}
}
