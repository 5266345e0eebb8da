package discovery

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPI is an API server for pods: paged lists with labelSelector and continue tokens, and watches that stream
// one JSON event per line, as kube-apiserver does. Objects carry the fields real pods carry around the ones read.
type fakeAPI struct {
	token string
	mu    sync.Mutex
	rv    int
	pods  map[string]map[string]any // ns/name → pod object
	subs  map[chan []byte]bool
	// log holds every event with its resourceVersion: a watch from resourceVersion N first gets the events after
	// N, so no change between the list and the watch is lost.
	log   []loggedEvent
	lists int
	// hostileWatch, when set, answers watches with it instead of events.
	hostileWatch func(w http.ResponseWriter)
}

type loggedEvent struct {
	rv int
	b  []byte
}

func newFakeAPI(token string) *fakeAPI {
	return &fakeAPI{token: token, pods: map[string]map[string]any{}, subs: map[chan []byte]bool{}}
}

// podObject is a pod as the API server serialises it (trimmed of managedFields, kept realistic otherwise).
func podObject(ns, name, ip, role string, rv int) map[string]any {
	return map[string]any{
		"kind": "Pod", "apiVersion": "v1",
		"metadata": map[string]any{
			"name": name, "namespace": ns, "uid": "3f8e2a34-" + name, "resourceVersion": strconv.Itoa(rv),
			"creationTimestamp": "2026-11-26T20:00:00Z", "generateName": "vllm-",
			"labels": map[string]any{"app": "vllm", "llm-d.ai/role": role, "llm-d.ai/model": "Qwen3-8B",
				"pod-template-hash": "7c9d5b8f4"},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "vllm-7c9d5b8f4", "controller": true}},
		},
		"spec": map[string]any{
			"nodeName": "gpu-node-1",
			"containers": []any{map[string]any{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
				"ports": []any{map[string]any{"name": "http", "containerPort": 8000, "protocol": "TCP"},
					map[string]any{"name": "nixl", "containerPort": 5557, "protocol": "TCP"}}}},
		},
		"status": map[string]any{"phase": "Running", "podIP": ip, "hostIP": "192.168.1.10",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}
}

func (f *fakeAPI) event(typ string, obj map[string]any) {
	b, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	f.log = append(f.log, loggedEvent{f.rv, append(b, '\n')})
	for ch := range f.subs {
		ch <- append(b, '\n')
	}
}

// set makes the namespace hold exactly the pods named, with IPs 10.3.0.<i+1>.
func (f *fakeAPI) set(ns string, roles ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := map[string]bool{}
	for i, role := range roles {
		name := fmt.Sprintf("vllm-%02d", i)
		want[ns+"/"+name] = true
		if _, ok := f.pods[ns+"/"+name]; ok {
			continue
		}
		f.rv++
		p := podObject(ns, name, fmt.Sprintf("10.3.0.%d", i+1), role, f.rv)
		f.pods[ns+"/"+name] = p
		f.event("ADDED", p)
	}
	for key, p := range f.pods {
		if strings.HasPrefix(key, ns+"/") && !want[key] {
			f.rv++
			delete(f.pods, key)
			f.event("DELETED", p)
		}
	}
	f.rv++
	f.event("BOOKMARK", map[string]any{"kind": "Pod", "metadata": map[string]any{"resourceVersion": strconv.Itoa(f.rv)}})
}

func selects(selector string, labels map[string]any) bool {
	for _, term := range strings.Split(selector, ",") {
		if k, v, ok := strings.Cut(term, "="); ok && labels[k] != v {
			return false
		}
	}
	return true
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods is forbidden: User \"system:serviceaccount:grafana:grafana\" cannot list resource \"pods\" in API group \"\" in the namespace \"llm\"","reason":"Forbidden","code":403}`)
		return
	}
	parts := strings.Split(r.URL.Path, "/") // /api/v1/namespaces/<ns>/pods
	if len(parts) != 6 || parts[3] != "namespaces" || parts[5] != "pods" {
		http.NotFound(w, r)
		return
	}
	ns, q := parts[4], r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("watch") == "true" {
		f.serveWatch(w, r)
		return
	}
	f.mu.Lock()
	f.lists++
	var keys []string
	for key, p := range f.pods {
		if strings.HasPrefix(key, ns+"/") && selects(q.Get("labelSelector"), p["metadata"].(map[string]any)["labels"].(map[string]any)) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	from, _ := strconv.Atoi(q.Get("continue"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	to, cont := len(keys), ""
	if limit > 0 && from+limit < len(keys) {
		to, cont = from+limit, strconv.Itoa(from+limit)
	}
	items := []any{}
	for _, k := range keys[from:to] {
		items = append(items, f.pods[k])
	}
	rv := f.rv
	f.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"kind": "PodList", "apiVersion": "v1",
		"metadata": map[string]any{"resourceVersion": strconv.Itoa(rv), "continue": cont}, "items": items})
}

func (f *fakeAPI) serveWatch(w http.ResponseWriter, r *http.Request) {
	if f.hostileWatch != nil {
		f.hostileWatch(w)
		return
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("resourceVersion"))
	ch := make(chan []byte, 1<<16)
	f.mu.Lock()
	for _, e := range f.log {
		if e.rv > from {
			ch <- e.b
		}
	}
	f.subs[ch] = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.subs, ch)
		f.mu.Unlock()
	}()
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	// The watch never ends on its own: the client's context does.
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-ch:
			w.Write(b)
			w.(http.Flusher).Flush()
		}
	}
}

// kubeconfigFor writes a kubeconfig naming the server and token.
func kubeconfigFor(t *testing.T, server, token string) string {
	path := filepath.Join(t.TempDir(), "config")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: c, user: u, namespace: llm}
clusters:
- name: c
  cluster: {server: %q}
users:
- name: u
  user: {token: %q}
`, server, token)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
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
	api := newFakeAPI("sa-token")
	api.set("llm", "prefill", "decode", "decode", "decode")
	api.set("other", "decode") // not asked for
	srv := httptest.NewServer(api)
	defer srv.Close()
	r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: kubeconfigFor(t, srv.URL, "sa-token"), Namespaces: []string{"llm"},
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
		roles := make([]string, n)
		for i := range roles {
			roles[i] = "decode"
		}
		api.set("llm", roles...)
		eventually(t, fmt.Sprintf("%d pods", n), func() (bool, string) {
			res := r.Refresh(context.Background())
			return len(res.Endpoints) == n, names(res.Endpoints)
		})
	}
	api.mu.Lock()
	lists := api.lists
	api.mu.Unlock()
	if lists != 1 {
		t.Errorf("%d lists: changes should come through the watch", lists)
	}
}

func TestKubernetesInClusterServiceAccount(t *testing.T) {
	api := newFakeAPI("rotated-token")
	api.set("llm", "decode")
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
	api := newFakeAPI("right")
	srv := httptest.NewServer(api)
	defer srv.Close()
	r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: kubeconfigFor(t, srv.URL, "wrong"), Namespaces: []string{"llm"}, Port: 8000}},
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
		api := newFakeAPI("t")
		roles := make([]string, 100_000)
		for i := range roles {
			roles[i] = "decode"
		}
		api.set("llm", roles...)
		srv := httptest.NewServer(api)
		defer srv.Close()
		r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: kubeconfigFor(t, srv.URL, "t"), Namespaces: []string{"llm"}, Port: 8000}},
			Options{MaxEndpoints: 1000})
		defer r.Close()
		res := r.Refresh(context.Background())
		if len(res.Endpoints) != 1000 || !strings.Contains(strings.Join(res.Notices, "\n"), "found more than 1000 targets") {
			t.Fatalf("%d endpoints, notices %v", len(res.Endpoints), res.Notices)
		}
		if api.lists > 1001/MaxKubernetesPage+2 {
			t.Errorf("%d list pages for a cap of 1001 pods", api.lists)
		}
	})
	t.Run("a watch event that never ends", func(t *testing.T) {
		api := newFakeAPI("t")
		api.set("llm", "decode", "decode")
		api.hostileWatch = func(w http.ResponseWriter) {
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
		r := NewRunner([]Source{{Type: TypeKubernetes, Kubeconfig: kubeconfigFor(t, srv.URL, "t"), Namespaces: []string{"llm"}, Port: 8000}},
			Options{MaxEndpoints: 10})
		defer r.Close()
		eventually(t, "the oversized event's notice", func() (bool, string) {
			res := r.Refresh(context.Background())
			return len(res.Endpoints) == 2 && strings.Contains(res.Reports[0].Error, "a watch event is over 2 MB"), fmt.Sprintf("%+v", res)
		})
	})
}
