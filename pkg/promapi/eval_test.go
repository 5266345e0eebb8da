package promapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// TestCacheConfigsAreReused: the capacity panels' refreshes take the cache configurations asked within
// DefaultNamesTTL for a range that covers theirs but for its newest TTL; a wider range or another endpoint filter
// asks the server again, an older answer serves while a background lookup asks again, and one past StaleFor waits.
func TestCacheConfigsAreReused(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/series" {
			http.NotFound(w, r)
			return
		}
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":[{"__name__":"vllm:cache_config_info","num_gpu_blocks":"2048","block_size":"16"},` +
			`{"__name__":"vllm:cache_config_info","num_gpu_blocks":"1024","block_size":"16"},{"__name__":"vllm:cache_config_info","num_gpu_blocks":"2048","block_size":"16"}]}`))
	}))
	t.Cleanup(srv.Close)
	ev := &Evaluator{Client: &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}}}
	held := []string{"vllm:cache_config_info"}
	end := time.Now()
	want := []CacheConfig{{NumGPUBlocks: "1024", BlockSize: "16"}, {NumGPUBlocks: "2048", BlockSize: "16"}}
	for i, tc := range []struct {
		q          query.Query
		start, end time.Time
		asks       int32
		background bool // the last ask is in the background
	}{
		{query.Query{}, end.Add(-time.Hour), end, 1, false},
		{query.Query{}, end.Add(-time.Hour + 5*time.Second), end.Add(5 * time.Second), 1, false}, // the next refresh
		{query.Query{}, end.Add(-2 * time.Hour), end, 2, false},                                  // a wider range
		{query.Query{Endpoint: "a:8000"}, end.Add(-time.Hour), end, 3, false},                    // another filter
		{query.Query{}, end.Add(-time.Hour), end.Add(DefaultNamesTTL + time.Second), 4, true},    // past the TTL's newest part
		{query.Query{}, end.Add(-time.Hour), end.Add(3*DefaultNamesTTL + StaleFor), 5, false},    // and past StaleFor
	} {
		got, err := ev.cacheConfigs(context.Background(), tc.q, held, tc.start, tc.end)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("call %d: %v, want %v", i, got, want)
		}
		if tc.background {
			eventually(t, "the background lookup asks", func() bool { return asked.Load() == tc.asks })
			eventually(t, "the background lookup ends", func() bool { return !ev.configs.lookup.running.Load() })
		}
		if n := asked.Load(); n != tc.asks {
			t.Errorf("call %d: the server asked %d times in all, want %d", i, n, tc.asks)
		}
	}
}

// TestCacheConfigsAreBounded: a server listing more distinct cache configurations than one KV-pool query may write
// into its PromQL gets a clear error, read one series at a time, instead of a query with a term for each.
func TestCacheConfigsAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":[`))
		for i := range maxCacheConfigs + 10 {
			if i > 0 {
				_, _ = w.Write([]byte(","))
			}
			fmt.Fprintf(w, `{"__name__":"vllm:cache_config_info","num_gpu_blocks":"%d","block_size":"16"}`, i)
		}
		_, _ = w.Write([]byte(`]}`))
	}))
	t.Cleanup(srv.Close)
	ev := &Evaluator{Client: &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: time.Minute}}}
	end := time.Now()
	got, err := ev.cacheConfigs(context.Background(), query.Query{}, []string{"vllm:cache_config_info"}, end.Add(-time.Hour), end)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d cache configurations", maxCacheConfigs)) {
		t.Fatalf("cacheConfigs = %d configurations, err %v; want the bound's error", len(got), err)
	}
}
