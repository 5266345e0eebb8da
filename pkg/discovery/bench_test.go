package discovery

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkHundredThousandTargets is one round over an http_sd answer of 100 000 targets (about 2 MB), cut at
// 1000 endpoints: what a hostile or mistaken inventory costs each discovery interval.
func BenchmarkHundredThousandTargets(b *testing.B) {
	var body strings.Builder
	body.WriteString(`[{"targets":[`)
	for i := range 100_000 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `"10.%d.%d.%d:8000"`, i>>16, (i>>8)&255, i&255)
	}
	body.WriteString(`],"labels":{"job":"vllm"}}]`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body.String())
	}))
	defer srv.Close()
	r := NewRunner([]Source{{Type: TypeHTTP, URL: srv.URL}}, Options{Client: srv.Client(), MaxEndpoints: 1000})
	defer r.Close()
	b.ReportAllocs()
	for b.Loop() {
		if res := r.Refresh(context.Background()); len(res.Endpoints) != 1000 {
			b.Fatalf("%d endpoints", len(res.Endpoints))
		}
	}
}
