package datasource

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/discovery/discoverytest"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// simFleet is up to n simulated vLLM servers on 127.0.0.1 … 127.0.0.n, all on one port, so that every discovery
// source (A records included) can name them as a real fleet's pods: one address each, one metrics port.
func simFleet(t *testing.T, n int) (port int) {
	t.Helper()
	return loopbackFleet(t, n, func(i int) http.Handler {
		cfg := sim.Default()
		cfg.Seed = int64(i + 1)
		s, err := sim.NewServer(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.Handler()
	})
}

// loopbackFleet serves handler(i) on 127.0.0.(i+1) for i < n, all on one port, and returns the port.
func loopbackFleet(t *testing.T, n int, handler func(i int) http.Handler) (port int) {
	t.Helper()
	for attempt := 0; attempt < 10; attempt++ {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = first.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{first}
		for i := 2; i <= n; i++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:%d", i, port))
			if err != nil {
				break
			}
			lns = append(lns, ln)
		}
		if len(lns) < n {
			for _, ln := range lns {
				ln.Close()
			}
			continue
		}
		for i, ln := range lns {
			srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: handler(i)}}
			srv.Start()
			t.Cleanup(srv.Close)
		}
		return port
	}
	t.Fatal("no port free on 127.0.0.1-16")
	return 0
}

// upSeries are the endpoints with an up series in [from, now], each with its last non-NaN value, as the
// "vLLM endpoint down" rule reduces them (last, dropping non-numbers).
func upSeries(t *testing.T, d *Datasource, from time.Time) (map[string]float64, []string) {
	t.Helper()
	resp, err := d.QueryData(context.Background(), &backend.QueryDataRequest{Queries: []backend.DataQuery{{RefID: "A",
		JSON: []byte(`{"queryType":"raw","metric":"up"}`), Interval: time.Second, MaxDataPoints: 43200,
		TimeRange: backend.TimeRange{From: from, To: time.Now()}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.Responses["A"]
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	out := map[string]float64{}
	var notices []string
	for _, f := range r.Frames {
		if f.Meta != nil {
			for _, n := range f.Meta.Notices {
				notices = append(notices, n.Text)
			}
		}
		for _, field := range f.Fields {
			if field.Type() == data.FieldTypeTime {
				continue
			}
			ep := field.Labels["endpoint"]
			last := math.NaN()
			for i := range field.Len() {
				if v, ok := field.ConcreteAt(i); ok {
					if x := v.(float64); !math.IsNaN(x) {
						last = x
					}
				}
			}
			out[ep] = last
		}
	}
	return out, notices
}

// listed is the endpoints resource: names up, names gone, and roles by name.
func listed(t *testing.T, d *Datasource) (up, gone []string, roles map[string]string) {
	t.Helper()
	s := &resourceSender{}
	if err := d.CallResource(context.Background(), &backend.CallResourceRequest{Method: "GET", Path: "endpoints", URL: "/endpoints"}, s); err != nil {
		t.Fatal(err)
	}
	var eps []EndpointHealth
	if err := json.Unmarshal(s.resp.Body, &eps); err != nil {
		t.Fatalf("%s: %v", s.resp.Body, err)
	}
	roles = map[string]string{}
	for _, e := range eps {
		switch {
		case e.Gone:
			gone = append(gone, e.Name)
		case e.Up:
			up = append(up, e.Name)
		}
		roles[e.Name] = e.Role
	}
	sort.Strings(up)
	sort.Strings(gone)
	return up, gone, roles
}

// discoverySources are the kinds of source (file, http, dns, kubernetes pods and EndpointSlices) in the order tests
// run them.
var discoverySources = []string{"file", "http", "dns", "kubernetes", "kubernetes-endpointslice"}

// fleetSources makes, per kind, a discovery source listing 127.0.0.1 … 127.0.0.n on port, and a function that
// changes n: a file_sd file rewritten, an http_sd answer, A records on a DNS server on loopback, and the pods of a
// fake Kubernetes API server (named vllm-00 …, the first labelled prefill and the rest decode by llm-d.ai/role) or
// the EndpointSlices of their Service (at most 5 endpoints a slice, so scaling adds, changes and deletes slices).
func fleetSources(port int) map[string]func(t *testing.T) (discovery.Source, func(n int)) {
	addr := func(i int) string { return fmt.Sprintf("127.0.0.%d:%d", i+1, port) }
	pods := func(n int) []discoverytest.Pod {
		out := make([]discoverytest.Pod, n)
		for i := range out {
			role := "decode"
			if i == 0 {
				role = "prefill"
			}
			out[i] = discoverytest.Pod{Name: fmt.Sprintf("vllm-%02d", i), IP: fmt.Sprintf("127.0.0.%d", i+1), Port: port,
				Labels: map[string]string{"app": "vllm", "llm-d.ai/role": role}}
		}
		return out
	}
	groups := func(n int) []byte {
		ts := make([]string, n)
		for i := range ts {
			ts[i] = addr(i)
		}
		b, _ := json.Marshal([]map[string]any{{"targets": ts, "labels": map[string]string{"job": "vllm"}}})
		return b
	}
	return map[string]func(t *testing.T) (discovery.Source, func(n int)){
		"file": func(t *testing.T) (discovery.Source, func(int)) {
			path := filepath.Join(t.TempDir(), "targets.json")
			set := func(n int) {
				if err := os.WriteFile(path+".tmp", groups(n), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(path+".tmp", path); err != nil {
					t.Fatal(err)
				}
			}
			return discovery.Source{Type: discovery.TypeFile, Path: path}, set
		},
		"http": func(t *testing.T) (discovery.Source, func(int)) {
			var size atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(groups(int(size.Load())))
			}))
			t.Cleanup(srv.Close)
			return discovery.Source{Type: discovery.TypeHTTP, URL: srv.URL + "/sd"}, func(n int) { size.Store(int64(n)) }
		},
		"dns": func(t *testing.T) (discovery.Source, func(int)) {
			z := discoverytest.NewZone()
			return discovery.Source{Type: discovery.TypeDNS, DNSName: "vllm.llm.svc.cluster.local", Port: port, DNSServer: z.Serve(t)},
				func(n int) {
					z.Set("vllm.llm.svc.cluster.local", "A", discoverytest.A("vllm.llm.svc.cluster.local", "127.0.0.", n)...)
				}
		},
		"kubernetes": func(t *testing.T) (discovery.Source, func(int)) {
			api, kubeconfig := kubeAPI(t)
			return discovery.Source{Type: discovery.TypeKubernetes, Kubeconfig: kubeconfig,
				Namespaces: []string{"llm"}, LabelSelector: "app=vllm", PortName: "http",
				Relabel: discovery.Relabel{RoleLabel: "llm-d.ai/role"}}, func(n int) { api.Set("llm", pods(n)...) }
		},
		"kubernetes-endpointslice": func(t *testing.T) (discovery.Source, func(int)) {
			api, kubeconfig := kubeAPI(t)
			return discovery.Source{Type: discovery.TypeKubernetes, KubernetesRole: discovery.KubernetesRoleEndpointSlice,
					Kubeconfig: kubeconfig, Namespaces: []string{"llm"}, LabelSelector: "kubernetes.io/service-name=vllm", PortName: "http"},
				func(n int) { api.SetSlices("llm", discoverytest.SlicesOf("vllm", port, 5, pods(n)...)...) }
		},
	}
}

// kubeAPI is a fake Kubernetes API server for the test and a kubeconfig naming it with its token.
func kubeAPI(t *testing.T) (*discoverytest.KubeAPI, string) {
	api := discoverytest.NewKubeAPI("sa-token")
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, discoverytest.Kubeconfig(t, srv.URL, "sa-token")
}

// TestDirectModeFollowsAChangingFleet scales a simulated fleet 4 → 16 → 2 behind each discovery source: scrapes,
// health, the endpoints resource and queries follow; departed endpoints keep their history, are listed as gone,
// and their up series ends without a 0, so "vLLM endpoint down" does not fire for them.
func TestDirectModeFollowsAChangingFleet(t *testing.T) {
	port := simFleet(t, 16)
	sources := fleetSources(port)
	for _, name := range discoverySources {
		t.Run(name, func(t *testing.T) {
			src, set := sources[name](t)
			set(4)
			js, _ := json.Marshal(map[string]any{"mode": "direct", "scrapeInterval": "3s", "scrapeTimeout": "3s", "discoveryInterval": "1s",
				"discovery": []discovery.Source{src}})
			start := time.Now().Add(-time.Minute) // a range of whole steps around the test
			d := instance(t, backend.DataSourceInstanceSettings{UID: "fleet-" + name, JSONData: js})
			var ever []string
			for _, n := range []int{4, 16, 2} {
				set(n)
				for i := len(ever); i < n; i++ {
					ever = append(ever, name+"-"+fmt.Sprint(i))
				}
				// Within one discovery interval plus one scrape (and, for a query, the next whole step after it); the
				// bound here is generous for a busy machine.
				var up, gone []string
				var roles map[string]string
				var series map[string]float64
				var notices []string
				deadline := time.Now().Add(60 * time.Second)
				for {
					up, gone, roles = listed(t, d)
					series, notices = upSeries(t, d, start)
					if len(up) == n && len(up)+len(gone) == len(ever) && len(series) == len(ever) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("fleet of %d: up %v, gone %v, up series %v", n, up, gone, series)
					}
					time.Sleep(50 * time.Millisecond)
				}
				h, err := d.CheckHealth(context.Background(), &backend.CheckHealthRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if h.Status != backend.HealthStatusOk || !strings.Contains(h.Message, fmt.Sprintf("%d of %d endpoint(s) reachable", n, n)) ||
					!strings.Contains(h.Message, "Discovery: "+string(src.Type)+" #1 found") {
					t.Fatalf("health with %d: %s %s", n, h.Status, h.Message)
				}
				if name == "kubernetes" {
					if roles["vllm-00"] != "prefill" || roles["vllm-01"] != "decode" {
						t.Errorf("roles from pod labels: %v", roles)
					}
					// The simulated servers run no NIXL connector, so their metrics alone say unified: the roles
					// queries see are the labels'.
					s := &resourceSender{}
					if err := d.CallResource(context.Background(), &backend.CallResourceRequest{Method: "GET", Path: "roles", URL: "/roles"}, s); err != nil {
						t.Fatal(err)
					}
					if got := string(s.resp.Body); !strings.Contains(got, `"decode"`) || !strings.Contains(got, `"prefill"`) || strings.Contains(got, "unified") {
						t.Errorf("roles resource %s", got)
					}
					if !strings.Contains(h.Message, "role prefill (label, kubernetes #1)") {
						t.Errorf("health does not say where the role came from: %s", h.Message)
					}
				}
				// Every endpoint ever seen keeps its history; none ends at 0, so the down rule stays quiet.
				for ep, v := range series {
					if v != 1 {
						t.Errorf("fleet of %d: %s's last up is %v, want 1", n, ep, v)
					}
				}
				for _, note := range notices {
					if strings.Contains(note, "endpoint ") {
						t.Errorf("fleet of %d: notice %q", n, note)
					}
				}
			}
		})
	}
}

// A discovery source that fails leaves the data source working: the static endpoint answers, Save & test names the
// source and its error, and the error quotes no secret of the http_sd URL.
func TestFailingDiscoveryLeavesTheDataSourceWorking(t *testing.T) {
	body := fixture(t, "dynamo_vllm_worker_8081_v1_single_engine.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://sd-user:sd-pass@" + dead.Addr().String() + "/sd?token=s3cr3t-token"
	dead.Close()
	js, _ := json.Marshal(map[string]any{"scrapeInterval": "1h", "endpoints": []map[string]string{{"url": srv.URL + "/metrics", "name": "static"}},
		"discovery": []discovery.Source{{Type: discovery.TypeHTTP, URL: deadURL, Name: "consul"}}})
	d := instance(t, backend.DataSourceInstanceSettings{UID: "failing-sd", JSONData: js})
	h, err := d.CheckHealth(context.Background(), &backend.CheckHealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	all := h.Message + string(h.JSONDetails)
	if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "1 of 1 endpoint(s) reachable") || !strings.Contains(h.Message, "consul failed: http_sd:") {
		t.Errorf("health: %s %s", h.Status, h.Message)
	}
	for _, secret := range []string{"s3cr3t-token", "sd-pass"} {
		if strings.Contains(all, secret) {
			t.Errorf("health quotes %q: %s", secret, all)
		}
	}
	up, gone, _ := listed(t, d)
	if len(up) != 1 || up[0] != "static" || len(gone) != 0 {
		t.Errorf("endpoints up %v gone %v", up, gone)
	}
}

// A discovery answer of 100 000 targets is cut at the endpoint limit: the data source scrapes 1000, and Save & test
// and queries say what was left out.
func TestDiscoveryOverTheEndpointLimitIsCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		ts := make([]string, 100_000)
		for i := range ts {
			// Loopback addresses with a closed port: every scrape is refused at once.
			ts[i] = fmt.Sprintf("127.%d.%d.%d:1", 1+i>>16, (i>>8)&255, i&255)
		}
		b, _ := json.Marshal([]map[string]any{{"targets": ts}})
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	js, _ := json.Marshal(map[string]any{"scrapeInterval": "1h", "scrapeTimeout": "10s",
		"discovery": []discovery.Source{{Type: discovery.TypeHTTP, URL: srv.URL}}})
	d := instance(t, backend.DataSourceInstanceSettings{UID: "too-many", JSONData: js})
	h, err := d.CheckHealth(context.Background(), &backend.CheckHealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Message, fmt.Sprintf("of %d endpoint(s) reachable", MaxEndpoints)) ||
		!strings.Contains(h.Message, fmt.Sprintf("http #1 found more than %d targets", MaxEndpoints)) {
		t.Errorf("health: %.600s", h.Message)
	}
	_, notices := upSeries(t, d, time.Now().Add(-time.Minute))
	if !strings.Contains(strings.Join(notices, "\n"), fmt.Sprintf("found more than %d targets", MaxEndpoints)) {
		t.Errorf("query notices %.600v", notices)
	}
}

// TestPrometheusModeReadsTheRelabelledRole: in Prometheus mode, a role label the server's relabel rules attach
// (here static labels, as kubernetes_sd plus a relabel of llm-d.ai/role would leave them) gives the roles, although
// the servers' metrics alone show no prefill/decode evidence.
func TestPrometheusModeReadsTheRelabelledRole(t *testing.T) {
	port := simFleet(t, 2)
	prom := promtest.Start(t, promtest.Options{Targets: []promtest.Target{
		{Addr: fmt.Sprintf("127.0.0.1:%d", port), Labels: map[string]string{"role": "prefill"}},
		{Addr: fmt.Sprintf("127.0.0.2:%d", port), Labels: map[string]string{"role": "decode"}},
	}})
	prom.WaitFor(t, `count(vllm:num_requests_running{role!=""})`, time.Minute, func(v model.Vector) bool {
		return len(v) == 1 && v[0].Value == 2
	})
	roles := func(roleLabel string) string {
		js, _ := json.Marshal(map[string]any{"mode": "prometheus", "scrapeInterval": "1s", "roleLabel": roleLabel})
		d := instance(t, backend.DataSourceInstanceSettings{UID: "prom-roles-" + roleLabel, URL: prom.URL, JSONData: js})
		s := &resourceSender{}
		if err := d.CallResource(context.Background(), &backend.CallResourceRequest{Method: "GET", Path: "roles", URL: "/roles"}, s); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(s.resp.Body))
	}
	if got := roles("role"); got != `["decode","prefill"]` {
		t.Errorf("roles with roleLabel: %s", got)
	}
	if got := roles(""); strings.Contains(got, "prefill") {
		t.Errorf("roles without roleLabel: %s", got)
	}
}
