package discovery

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/discovery/discoverytest"
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

// BenchmarkEndpointSliceFirstList is a Kubernetes source's first list of a Service's EndpointSlices holding 100 000
// endpoints (100 slices of 1000; the first page asks 50), cut at 1000 endpoints: what a data source's cold start
// costs against a huge Service.
func BenchmarkEndpointSliceFirstList(b *testing.B) {
	pods := make([]discoverytest.Pod, 100_000)
	for i := range pods {
		pods[i] = discoverytest.Pod{Name: fmt.Sprintf("vllm-%05d", i), IP: fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255)}
	}
	api := discoverytest.NewKubeAPI("t")
	api.SetSlices("llm", discoverytest.SlicesOf("vllm", 8000, 1000, pods...)...)
	// The API server's first page, encoded once, so that the benchmark measures the client: the page is answered
	// from memory, and the watch after it waits.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/apis/discovery.k8s.io/v1/namespaces/llm/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dvllm&limit=50", nil)
	req.Header.Set("Authorization", "Bearer t")
	api.ServeHTTP(rec, req)
	page := rec.Body.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			<-r.Context().Done()
			return
		}
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	b.SetBytes(int64(len(page)))
	src := Source{Type: TypeKubernetes, KubernetesRole: KubernetesRoleEndpointSlice, Kubeconfig: discoverytest.Kubeconfig(b, srv.URL, "t"),
		Namespaces: []string{"llm"}, LabelSelector: "kubernetes.io/service-name=vllm", PortName: "http"}
	b.ReportAllocs()
	for b.Loop() {
		r := NewRunner([]Source{src}, Options{MaxEndpoints: 1000})
		if res := r.Refresh(context.Background()); len(res.Endpoints) != 1000 {
			b.Fatalf("%d endpoints", len(res.Endpoints))
		}
		r.Close()
	}
}
