package promapi

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestDownStoresReadsBoundedAnswers: /api/v1/stores is asked of every Prometheus-mode server, and one that is not
// Thanos Query may answer it with anything: here a million-series matrix (about 150 MB), which was read whole and
// unmarshalled, growing the plugin by hundreds of MB on each Save & test. It is now read store by store and given up
// after maxStores entries, and a Thanos answer still names its unhealthy stores.
func TestDownStoresReadsBoundedAnswers(t *testing.T) {
	var written atomic.Int64
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriterSize(w, 1<<16)
		defer bw.Flush()
		n, _ := fmt.Fprint(bw, `{"status":"success","data":{"resultType":"matrix","result":[`)
		written.Add(int64(n))
		for i := range 1_000_000 {
			sep := ","
			if i == 0 {
				sep = ""
			}
			n, err := fmt.Fprintf(bw, `%s{"metric":{"__name__":"vllm:num_requests_running","instance":"host-%d:8000"},"values":[[1700000000,"1"]]}`, sep, i)
			written.Add(int64(n))
			if err != nil {
				return // the client hung up
			}
		}
		_, _ = fmt.Fprint(bw, `]}}`)
	}))
	t.Cleanup(huge.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &Client{BaseURL: huge.URL, HTTP: &http.Client{Timeout: time.Minute}}
	down, err := c.DownStores(ctx)
	if err != nil || len(down) != 0 {
		t.Fatalf("DownStores of a non-Thanos answer = %v, %v; want none, no error", down, err)
	}
	huge.CloseClientConnections()
	if got := written.Load(); got > 32<<20 {
		t.Errorf("the client read %d MB of a non-Thanos /api/v1/stores answer", got>>20)
	}

	thanos := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, `{"status":"success","data":{"sidecar":[{"name":"10.0.0.2:10901","lastError":"connection refused"},`+
			`{"name":"10.0.0.1:10901","lastError":null}],"store":[{"name":"10.0.0.3:10901","lastError":"rpc error"}]}}`)
	}))
	t.Cleanup(thanos.Close)
	c = &Client{BaseURL: thanos.URL, HTTP: &http.Client{Timeout: time.Minute}}
	if down, err := c.DownStores(ctx); err != nil || fmt.Sprint(down) != "[10.0.0.2:10901 10.0.0.3:10901]" {
		t.Errorf("DownStores = %v, %v; want the two stores with a lastError", down, err)
	}
}
