package discoverytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// KubeAPI is an API server for pods: paged lists with labelSelector and continue tokens, and watches that stream
// one JSON event per line from a resourceVersion, as kube-apiserver does. Objects carry the fields real pods carry
// around the ones discovery reads.
type KubeAPI struct {
	token string
	mu    sync.Mutex
	rv    int
	pods  map[string]map[string]any // ns/name → pod object
	subs  map[chan []byte]bool
	// log holds every event with its resourceVersion: a watch from resourceVersion N first gets the events after N,
	// so no change between the list and the watch is lost.
	log   []loggedEvent
	lists int
	// HostileWatch, when set, answers watches instead of the event stream.
	HostileWatch func(w http.ResponseWriter)
}

type loggedEvent struct {
	rv int
	b  []byte
}

// Pod is one pod a test puts in the fake: its name, IP, metrics port (named "http") and labels.
type Pod struct {
	Name, IP string
	Port     int
	Labels   map[string]string
}

// NewKubeAPI is an empty API server accepting only the bearer token given.
func NewKubeAPI(token string) *KubeAPI {
	return &KubeAPI{token: token, pods: map[string]map[string]any{}, subs: map[chan []byte]bool{}}
}

// podObject is a pod as the API server serialises it (without managedFields, realistic otherwise).
func podObject(ns string, p Pod, rv int) map[string]any {
	labels := map[string]any{"pod-template-hash": "7c9d5b8f4"}
	for k, v := range p.Labels {
		labels[k] = v
	}
	return map[string]any{
		"kind": "Pod", "apiVersion": "v1",
		"metadata": map[string]any{
			"name": p.Name, "namespace": ns, "uid": "3f8e2a34-" + p.Name, "resourceVersion": strconv.Itoa(rv),
			"creationTimestamp": "2026-11-26T20:00:00Z", "generateName": "vllm-", "labels": labels,
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "vllm-7c9d5b8f4", "controller": true}},
		},
		"spec": map[string]any{
			"nodeName": "gpu-node-1",
			"containers": []any{map[string]any{"name": "vllm", "image": "vllm/vllm-openai:v0.11.0",
				"ports": []any{map[string]any{"name": "http", "containerPort": p.Port, "protocol": "TCP"},
					map[string]any{"name": "nixl", "containerPort": 5557, "protocol": "TCP"}}}},
		},
		"status": map[string]any{"phase": "Running", "podIP": p.IP, "hostIP": "192.168.1.10",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
	}
}

// event logs an event and sends it to the watches; k.mu is held.
func (k *KubeAPI) event(typ string, obj map[string]any) {
	b, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	b = append(b, '\n')
	k.log = append(k.log, loggedEvent{k.rv, b})
	for ch := range k.subs {
		ch <- b
	}
}

// Set makes the namespace hold exactly these pods: new names are ADDED, missing ones DELETED, then a BOOKMARK.
func (k *KubeAPI) Set(ns string, pods ...Pod) {
	k.mu.Lock()
	defer k.mu.Unlock()
	want := map[string]bool{}
	for _, p := range pods {
		key := ns + "/" + p.Name
		want[key] = true
		if _, ok := k.pods[key]; ok {
			continue
		}
		k.rv++
		obj := podObject(ns, p, k.rv)
		k.pods[key] = obj
		k.event("ADDED", obj)
	}
	var gone []string
	for key := range k.pods {
		if strings.HasPrefix(key, ns+"/") && !want[key] {
			gone = append(gone, key)
		}
	}
	sort.Strings(gone)
	for _, key := range gone {
		k.rv++
		obj := k.pods[key]
		delete(k.pods, key)
		k.event("DELETED", obj)
	}
	k.rv++
	k.event("BOOKMARK", map[string]any{"kind": "Pod", "metadata": map[string]any{"resourceVersion": strconv.Itoa(k.rv)}})
}

// Lists counts the list requests served.
func (k *KubeAPI) Lists() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lists
}

// selects matches equality selectors ("a=b,c=d").
func selects(selector string, labels map[string]any) bool {
	for _, term := range strings.Split(selector, ",") {
		if key, v, ok := strings.Cut(term, "="); ok && labels[key] != v {
			return false
		}
	}
	return true
}

func (k *KubeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+k.token {
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
		k.serveWatch(w, r)
		return
	}
	k.mu.Lock()
	k.lists++
	var keys []string
	for key, p := range k.pods {
		if strings.HasPrefix(key, ns+"/") && selects(q.Get("labelSelector"), p["metadata"].(map[string]any)["labels"].(map[string]any)) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	from, _ := strconv.Atoi(q.Get("continue"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	from = min(from, len(keys))
	to, cont := len(keys), ""
	if limit > 0 && from+limit < len(keys) {
		to, cont = from+limit, strconv.Itoa(from+limit)
	}
	items := []any{}
	for _, key := range keys[from:to] {
		items = append(items, k.pods[key])
	}
	rv := k.rv
	k.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "PodList", "apiVersion": "v1",
		"metadata": map[string]any{"resourceVersion": strconv.Itoa(rv), "continue": cont}, "items": items})
}

func (k *KubeAPI) serveWatch(w http.ResponseWriter, r *http.Request) {
	if k.HostileWatch != nil {
		k.HostileWatch(w)
		return
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("resourceVersion"))
	ch := make(chan []byte, 1<<16)
	k.mu.Lock()
	for _, e := range k.log {
		if e.rv > from {
			ch <- e.b
		}
	}
	k.subs[ch] = true
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.subs, ch)
		k.mu.Unlock()
	}()
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	// The watch does not end on its own: the client's context ends it.
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-ch:
			_, _ = w.Write(b)
			w.(http.Flusher).Flush()
		}
	}
}

// Kubeconfig writes a kubeconfig naming the server and token, and returns its path.
func Kubeconfig(t testing.TB, server, token string) string {
	t.Helper()
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
