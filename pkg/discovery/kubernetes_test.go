package discovery

import (
	"context"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/discovery/discoverytest"
)

// llmPods are n llm-d pods with the given role, IPs 10.3.0.1 onwards.
func llmPods(n int, roles ...string) []discoverytest.Pod {
	out := make([]discoverytest.Pod, n)
	for i := range out {
		role := "decode"
		if i < len(roles) {
			role = roles[i]
		}
		out[i] = discoverytest.Pod{Name: fmt.Sprintf("vllm-%02d", i), IP: fmt.Sprintf("10.3.%d.%d", i/250, i%250+1), Port: 8000,
			Labels: map[string]string{"app": "vllm", "llm-d.ai/role": role, "llm-d.ai/model": "Qwen3-8B"}}
	}
	return out
}

// eventually polls cond for up to 30 s (the machine is busy).
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: last %s", what, last)
}

func TestKubernetesFollowsPodsThroughListAndWatch(t *testing.T) {
	api := discoverytest.NewKubeAPI("sa-token")
	api.Set("llm", llmPods(4, "prefill")...)
	api.Set("other", llmPods(1)...) // not asked for
	srv := httptest.NewServer(api)
	defer srv.Close()
	r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: discoverytest.Kubeconfig(t, srv.URL, "sa-token"), Namespaces: []string{"llm"},
		LabelSelector: "app=vllm", PortName: "http",
		Relabel: Relabel{RoleLabel: "llm-d.ai/role", ModelLabel: "llm-d.ai/model"}}}, Options{MaxEndpoints: 100})
	defer r.Close()
	res := r.Refresh(context.Background())
	if got := names(res.Endpoints); got != "vllm-00,vllm-01,vllm-02,vllm-03" {
		t.Fatalf("endpoints %s %+v", got, res.Reports)
	}
	if e := res.Endpoints[0]; e.URL != "http://10.3.0.1:8000/metrics" || e.Role != "prefill" || e.Model != "Qwen3-8B" {
		t.Errorf("%+v", e)
	}
	if e := res.Endpoints[1]; e.Role != "decode" {
		t.Errorf("%+v", e)
	}
	for _, n := range []int{16, 2} {
		api.Set("llm", llmPods(n)...)
		eventually(t, fmt.Sprintf("%d pods", n), func() (bool, string) {
			res := r.Refresh(context.Background())
			return len(res.Endpoints) == n, names(res.Endpoints)
		})
	}
	if lists := api.Lists(); lists != 1 {
		t.Errorf("%d lists: changes should come through the watch", lists)
	}
}

func TestKubernetesInClusterServiceAccount(t *testing.T) {
	api := discoverytest.NewKubeAPI("rotated-token")
	api.Set("llm", llmPods(1)...)
	srv := httptest.NewTLSServer(api)
	defer srv.Close()
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o644)
	os.WriteFile(filepath.Join(dir, "token"), []byte("rotated-token\n"), 0o600)
	old := serviceAccountDir
	serviceAccountDir = dir
	defer func() { serviceAccountDir = old }()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	t.Setenv("KUBERNETES_SERVICE_HOST", host)
	t.Setenv("KUBERNETES_SERVICE_PORT", port)
	r := NewRunner([]Source{{Type: TypeKubernetes, Namespaces: []string{"llm"}, Port: 8000}}, Options{MaxEndpoints: 10})
	defer r.Close()
	res := r.Refresh(context.Background())
	if len(res.Endpoints) != 1 || res.Endpoints[0].URL != "http://10.3.0.1:8000/metrics" {
		t.Fatalf("%+v", res)
	}
}

func TestKubernetesForbiddenNamesTheRBAC(t *testing.T) {
	api := discoverytest.NewKubeAPI("right")
	srv := httptest.NewServer(api)
	defer srv.Close()
	r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: discoverytest.Kubeconfig(t, srv.URL, "wrong"), Namespaces: []string{"llm"}, Port: 8000}},
		Options{MaxEndpoints: 10})
	defer r.Close()
	res := r.Refresh(context.Background())
	e := res.Reports[0].Error
	if !strings.Contains(e, "403") || !strings.Contains(e, "cannot list resource") || !strings.Contains(e, "list and watch on pods") {
		t.Errorf("error %q", e)
	}
	if strings.Contains(e, "wrong") {
		t.Errorf("the error quotes the token: %q", e)
	}
}

func TestKubernetesBoundsHostileAnswers(t *testing.T) {
	t.Run("a hundred thousand pods", func(t *testing.T) {
		api := discoverytest.NewKubeAPI("t")
		api.Set("llm", llmPods(100_000)...)
		srv := httptest.NewServer(api)
		defer srv.Close()
		r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: discoverytest.Kubeconfig(t, srv.URL, "t"), Namespaces: []string{"llm"}, Port: 8000}},
			Options{MaxEndpoints: 1000})
		defer r.Close()
		res := r.Refresh(context.Background())
		if len(res.Endpoints) != 1000 || !strings.Contains(strings.Join(res.Notices, "\n"), "found more than 1000 targets") {
			t.Fatalf("%d endpoints, notices %v", len(res.Endpoints), res.Notices)
		}
		if api.Lists() > 1001/MaxKubernetesPage+2 {
			t.Errorf("%d list pages for a cap of 1001 pods", api.Lists())
		}
	})
	t.Run("a watch event that never ends", func(t *testing.T) {
		api := discoverytest.NewKubeAPI("t")
		api.Set("llm", llmPods(2)...)
		api.HostileWatch = func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			chunk := []byte(`{"type":"ADDED","object":{"metadata":{"name":"` + strings.Repeat("x", 64<<10))
			for range 1 << 14 { // 1 GB if nobody stops reading
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
		srv := httptest.NewServer(api)
		defer srv.Close()
		r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: discoverytest.Kubeconfig(t, srv.URL, "t"), Namespaces: []string{"llm"}, Port: 8000}},
			Options{MaxEndpoints: 10})
		defer r.Close()
		eventually(t, "the oversized event's notice", func() (bool, string) {
			res := r.Refresh(context.Background())
			return len(res.Endpoints) == 2 && strings.Contains(res.Reports[0].Error, "a watch event is over 2 MB"), fmt.Sprintf("%+v", res)
		})
	})
	t.Run("a list that stops mid-page", func(t *testing.T) {
		stalled := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[`))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		srv := httptest.NewServer(stalled)
		defer srv.Close()
		r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: discoverytest.Kubeconfig(t, srv.URL, "t"), Namespaces: []string{"llm"}, Port: 8000}},
			Options{MaxEndpoints: 10})
		defer r.Close()
		r.sources[0].d.(*kubeSource).listTimeout = 200 * time.Millisecond
		res := r.Refresh(context.Background())
		if e := res.Reports[0].Error; !strings.Contains(e, "listing pods in namespace llm") || !strings.Contains(e, "deadline exceeded") {
			t.Errorf("report %+v", res.Reports[0])
		}
	})
}

// TestKubeconfigRefusesUnverifiedTLS: a kubeconfig that skips TLS verification would hand its token to whoever
// answers; it is refused, naming what to set instead.
func TestKubeconfigRefusesUnverifiedTLS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret-token}}]
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := newKubeClient(path, "", nil)
	if err == nil || !strings.Contains(err.Error(), "insecure-skip-tls-verify") || strings.Contains(err.Error(), "secret-token") {
		t.Fatalf("newKubeClient: %v", err)
	}
}

// sliceSource is a kubernetes source following the EndpointSlices of Service vllm in namespace llm of api.
func sliceSource(t *testing.T, url, token string) Source {
	return Source{Type: TypeKubernetes, KubernetesRole: KubernetesRoleEndpointSlice, Kubeconfig: discoverytest.Kubeconfig(t, url, token),
		Namespaces: []string{"llm"}, LabelSelector: "kubernetes.io/service-name=vllm", PortName: "http"}
}

func TestKubernetesFollowsEndpointSlices(t *testing.T) {
	api := discoverytest.NewKubeAPI("sa-token")
	api.SetSlices("llm", discoverytest.SlicesOf("vllm", 8000, 3, llmPods(4)...)...)
	api.SetSlices("other", discoverytest.SlicesOf("vllm", 8000, 3, llmPods(1)...)...) // not asked for
	api.Set("llm", llmPods(4)...)                                                     // pods: not what this role reads
	srv := httptest.NewServer(api)
	defer srv.Close()
	src := sliceSource(t, srv.URL, "sa-token")
	src.Keep = []Match{{Label: "__meta_kubernetes_endpointslice_endpoint_conditions_ready", Regex: "true"}}
	r := NewRunner([]Source{src}, Options{MaxEndpoints: 100})
	defer r.Close()
	res := r.Refresh(context.Background())
	if got := names(res.Endpoints); got != "vllm-00,vllm-01,vllm-02,vllm-03" {
		t.Fatalf("endpoints %s %+v", got, res.Reports)
	}
	if e := res.Endpoints[3]; e.URL != "http://10.3.0.4:8000/metrics" || e.Source != "kubernetes #1" {
		t.Errorf("%+v", e)
	}
	// The EndpointSlice controller changes slices in place (MODIFIED) and adds or deletes whole slices; a
	// terminating endpoint is leaving and is not scraped.
	for _, n := range []int{16, 2} {
		slices := discoverytest.SlicesOf("vllm", 8000, 3, llmPods(n)...)
		slices[0].Endpoints = append(slices[0].Endpoints, discoverytest.SliceEndpoint{IP: "10.9.9.9", Pod: "leaving", Terminating: true})
		api.SetSlices("llm", slices...)
		eventually(t, fmt.Sprintf("%d endpoints", n), func() (bool, string) {
			res := r.Refresh(context.Background())
			return len(res.Endpoints) == n && !strings.Contains(names(res.Endpoints), "leaving"), names(res.Endpoints)
		})
	}
	if lists := api.Lists(); lists != 1 {
		t.Errorf("%d lists: changes should come through the watch", lists)
	}
}

// TestEndpointSliceLabels: a slice's target carries the slice's labels and Prometheus's meta labels, so name
// templates and keep rules read them.
func TestEndpointSliceLabels(t *testing.T) {
	b := []byte(`{"metadata":{"name":"vllm-abcde","namespace":"llm","labels":{"kubernetes.io/service-name":"vllm"}},"addressType":"IPv6",
		"endpoints":[{"addresses":["fd00::1"],"conditions":{"ready":false},"hostname":"vllm-0","nodeName":"n1","targetRef":{"kind":"Pod","name":"vllm-0"}},
			{"addresses":[],"conditions":{}},{"addresses":["fd00::2"],"conditions":{"terminating":true}}],
		"ports":[{"name":"metrics","port":8000},{"name":"nixl","port":5557}]}`)
	o, err := kubeResources[KubernetesRoleEndpointSlice].decode(b)
	if err != nil {
		t.Fatal(err)
	}
	ts := o.targets(Source{PortName: "metrics"})
	if len(ts) != 1 || ts[0].Address != "[fd00::1]:8000" {
		t.Fatalf("targets %+v", ts)
	}
	want := map[string]string{"kubernetes.io/service-name": "vllm", "__meta_kubernetes_service_name": "vllm", "__meta_kubernetes_pod_name": "vllm-0",
		"__meta_kubernetes_endpointslice_name": "vllm-abcde", "__meta_kubernetes_endpointslice_port_name": "metrics",
		"__meta_kubernetes_endpointslice_address_type": "IPv6", "__meta_kubernetes_endpointslice_endpoint_conditions_ready": "false",
		"__meta_kubernetes_endpointslice_endpoint_node_name": "n1", "__meta_kubernetes_namespace": "llm"}
	for k, v := range want {
		if ts[0].Labels[k] != v {
			t.Errorf("%s = %q, want %q", k, ts[0].Labels[k], v)
		}
	}
	if ts := o.targets(Source{PortName: "http"}); len(ts) != 0 {
		t.Errorf("a port the slice does not name gave %+v", ts)
	}
	if ts := o.targets(Source{Port: 9000}); len(ts) != 1 || ts[0].Address != "[fd00::1]:9000" {
		t.Errorf("a port number: %+v", ts)
	}
	if err := (Source{Type: TypeKubernetes, KubernetesRole: "node", Port: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "not pod or endpointslice") {
		t.Errorf("Validate: %v", err)
	}
}

func TestEndpointSlicesForbiddenNamesTheRBAC(t *testing.T) {
	api := discoverytest.NewKubeAPI("right")
	srv := httptest.NewServer(api)
	defer srv.Close()
	r := NewRunner([]Source{sliceSource(t, srv.URL, "wrong-secret")}, Options{MaxEndpoints: 10})
	defer r.Close()
	e := r.Refresh(context.Background()).Reports[0].Error
	if !strings.Contains(e, "listing endpointslices in namespace llm") || !strings.Contains(e, `cannot list resource "endpointslices"`) ||
		!strings.Contains(e, "list and watch on endpointslices (discovery.k8s.io)") {
		t.Errorf("error %q", e)
	}
	if strings.Contains(e, "wrong-secret") {
		t.Errorf("the error quotes the token: %q", e)
	}
}

func TestEndpointSlicesBoundHostileAnswers(t *testing.T) {
	t.Run("a hundred thousand endpoints", func(t *testing.T) {
		api := discoverytest.NewKubeAPI("t")
		api.SetSlices("llm", discoverytest.SlicesOf("vllm", 8000, 1000, llmPods(100_000)...)...)
		srv := httptest.NewServer(api)
		defer srv.Close()
		r := NewRunner([]Source{sliceSource(t, srv.URL, "t")}, Options{MaxEndpoints: 1000})
		defer r.Close()
		res := r.Refresh(context.Background())
		if len(res.Endpoints) != 1000 || !strings.Contains(strings.Join(res.Notices, "\n"), "found more than 1000 targets") {
			t.Fatalf("%d endpoints, notices %v", len(res.Endpoints), res.Notices)
		}
		if api.Lists() != 1 {
			t.Errorf("%d list pages: the first page holds more slices than the cap takes", api.Lists())
		}
	})
	t.Run("one slice over the cap", func(t *testing.T) {
		api := discoverytest.NewKubeAPI("t")
		small := discoverytest.SlicesOf("vllm", 8000, 2, llmPods(2)...)[0]
		small.Name = "vllm-small"
		api.SetSlices("llm", append(discoverytest.SlicesOf("vllm", 8000, 5000, llmPods(5000)...), small)...)
		srv := httptest.NewServer(api)
		defer srv.Close()
		r := NewRunner([]Source{sliceSource(t, srv.URL, "t")}, Options{MaxEndpoints: 10})
		defer r.Close()
		res := r.Refresh(context.Background())
		// The list ends at the slice over the cap, with a notice; the source keeps working (and reports no error).
		if len(res.Endpoints) != 0 || res.Reports[0].Error != "" || !strings.Contains(strings.Join(res.Notices, "\n"), "found more than 10 targets") {
			t.Fatalf("%d endpoints, notices %v", len(res.Endpoints), res.Notices)
		}
	})
	t.Run("a watch event that never ends", func(t *testing.T) {
		api := discoverytest.NewKubeAPI("t")
		api.SetSlices("llm", discoverytest.SlicesOf("vllm", 8000, 3, llmPods(2)...)...)
		api.HostileWatch = func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusOK)
			chunk := []byte(`{"type":"MODIFIED","object":{"endpoints":[` + strings.Repeat(`{"addresses":["10.0.0.1"]},`, 2500))
			for range 1 << 14 { // 1 GB if nobody stops reading
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}
		srv := httptest.NewServer(api)
		defer srv.Close()
		r := NewRunner([]Source{sliceSource(t, srv.URL, "t")}, Options{MaxEndpoints: 10})
		defer r.Close()
		eventually(t, "the oversized event's notice", func() (bool, string) {
			res := r.Refresh(context.Background())
			e := res.Reports[0].Error
			return len(res.Endpoints) == 2 && strings.Contains(e, "watching endpointslices in namespace llm") && strings.Contains(e, "a watch event is over 2 MB"),
				fmt.Sprintf("%+v", res)
		})
	})
}

// TestEndpointSliceHostileObjects: malformed or oversized slices in a watch give a clear error or are bounded, never
// a panic; a slice over the cap is not kept.
func TestEndpointSliceHostileObjects(t *testing.T) {
	k := &kubeSource{res: kubeResources[KubernetesRoleEndpointSlice], cap: 10, src: Source{PortName: "http"}}
	many := `{"addresses":["10.0.0.1"]}` + strings.Repeat(`,{"addresses":["10.0.0.1"]}`, 50)
	for _, tc := range []struct {
		name, event, err string
		held             int
	}{
		{"not JSON", `{"type":"ADDED","object":{`, "not JSON", 0},
		{"a port that is a string", `{"type":"ADDED","object":{"metadata":{"name":"a"},"ports":[{"name":"http","port":"8000"}]}}`, "not one of endpointslices", 0},
		{"endpoints that are not a list", `{"type":"ADDED","object":{"metadata":{"name":"a"},"endpoints":{}}}`, "not one of endpointslices", 0},
		{"nulls everywhere", `{"type":"ADDED","object":{"metadata":null,"endpoints":[null,{"addresses":null,"conditions":null,"targetRef":null}],"ports":[null]}}`, "", 2},
		{"more endpoints than the cap", `{"type":"ADDED","object":{"metadata":{"name":"big"},"endpoints":[` + many + `]}}`, "", 0},
		{"an unknown event type", `{"type":"EXPLODED","object":{}}`, "unknown watch event type", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os := &objectSet{objects: map[string]kubeObject{}}
			err := k.apply([]byte(tc.event), os)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("apply: %v, want %q", err, tc.err)
			}
			if os.held != tc.held || os.truncated != (tc.name == "more endpoints than the cap") {
				t.Errorf("held %d, truncated %v; want %d", os.held, os.truncated, tc.held)
			}
			for _, o := range os.objects {
				if ts := o.targets(Source{PortName: "http"}); len(ts) != 0 {
					t.Errorf("targets from a slice without the port: %+v", ts)
				}
				if ts := o.targets(Source{Port: 70000}); len(ts) != 0 {
					t.Errorf("targets at port 70000: %+v", ts)
				}
				if ts := o.targets(Source{Port: 8000}); len(ts) != 0 {
					t.Errorf("targets from endpoints without addresses: %+v", ts)
				}
			}
		})
	}
}
