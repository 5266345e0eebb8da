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

// KubeAPI is an API server for pods and EndpointSlices: paged lists with labelSelector and continue tokens, and
// watches that stream one JSON event per line from a resourceVersion, as kube-apiserver does. Objects carry the
// fields real pods and slices carry around the ones discovery reads.
type KubeAPI struct {
	token string
	mu    sync.Mutex
	rv    int
	// objects are by resource/ns/name (pods/llm/vllm-00, endpointslices/llm/vllm-abcde).
	objects map[string]map[string]any
	subs    map[chan loggedEvent]bool
	// log holds every event with its resourceVersion: a watch from resourceVersion N first gets the events after N,
	// so no change between the list and the watch is lost.
	log   []loggedEvent
	lists int
	// HostileWatch, when set, answers watches instead of the event stream.
	HostileWatch func(w http.ResponseWriter)
}

type loggedEvent struct {
	rv int
	// prefix is the object's resource/ns/, which a watch of that collection receives.
	prefix string
	b      []byte
}

// Pod is one pod a test puts in the fake: its name, IP, metrics port (named "http") and labels.
type Pod struct {
	Name, IP string
	Port     int
	Labels   map[string]string
}

// NewKubeAPI is an empty API server accepting only the bearer token given.
func NewKubeAPI(token string) *KubeAPI {
	return &KubeAPI{token: token, objects: map[string]map[string]any{}, subs: map[chan loggedEvent]bool{}}
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

// event logs an event about an object of the collection prefix and sends it to the watches; k.mu is held.
func (k *KubeAPI) event(prefix, typ string, obj map[string]any) {
	b, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	b = append(b, '\n')
	e := loggedEvent{k.rv, prefix, b}
	k.log = append(k.log, e)
	for ch := range k.subs {
		ch <- e
	}
}

// Set makes the namespace hold exactly these pods: new names are ADDED, missing ones DELETED, then a BOOKMARK.
func (k *KubeAPI) Set(ns string, pods ...Pod) {
	objs := make(map[string]func(rv int) map[string]any, len(pods))
	for _, p := range pods {
		objs[p.Name] = func(rv int) map[string]any { return podObject(ns, p, rv) }
	}
	k.set("pods", ns, "Pod", objs)
}

// set makes resource's namespace hold exactly objs (by name): new names are ADDED, changed ones MODIFIED, missing
// ones DELETED, then a BOOKMARK.
func (k *KubeAPI) set(resource, ns, kind string, objs map[string]func(rv int) map[string]any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	prefix := resource + "/" + ns + "/"
	names := make([]string, 0, len(objs))
	for name := range objs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := prefix + name
		obj := objs[name](k.rv + 1)
		typ := "ADDED"
		if old, ok := k.objects[key]; ok {
			if sameObject(old, obj) {
				continue
			}
			typ = "MODIFIED"
		}
		k.rv++
		k.objects[key] = obj
		k.event(prefix, typ, obj)
	}
	var gone []string
	for key := range k.objects {
		if strings.HasPrefix(key, prefix) && objs[strings.TrimPrefix(key, prefix)] == nil {
			gone = append(gone, key)
		}
	}
	sort.Strings(gone)
	for _, key := range gone {
		k.rv++
		obj := k.objects[key]
		delete(k.objects, key)
		k.event(prefix, "DELETED", obj)
	}
	k.rv++
	k.event(prefix, "BOOKMARK", map[string]any{"kind": kind, "metadata": map[string]any{"resourceVersion": strconv.Itoa(k.rv)}})
}

// sameObject says whether two objects are equal apart from their resourceVersion (compared as JSON).
func sameObject(a, b map[string]any) bool {
	norm := func(m map[string]any) string {
		j, _ := json.Marshal(m)
		var c map[string]any
		_ = json.Unmarshal(j, &c)
		if md, ok := c["metadata"].(map[string]any); ok {
			delete(md, "resourceVersion")
		}
		j, _ = json.Marshal(c)
		return string(j)
	}
	return norm(a) == norm(b)
}

// Slice is one EndpointSlice a test puts in the fake: its name, the Service it belongs to, the port named "http",
// and its endpoints.
type Slice struct {
	Name, Service string
	Port          int
	Endpoints     []SliceEndpoint
}

// SliceEndpoint is one endpoint of a slice: its address, the pod behind it, and whether it is terminating.
type SliceEndpoint struct {
	IP, Pod     string
	Terminating bool
}

// SlicesOf groups pods into slices of at most perSlice endpoints for service, named <service>-00, -01, …, as the
// EndpointSlice controller does (its names end in random letters).
func SlicesOf(service string, port, perSlice int, pods ...Pod) []Slice {
	var out []Slice
	for i, p := range pods {
		if i%perSlice == 0 {
			out = append(out, Slice{Name: fmt.Sprintf("%s-%02d", service, i/perSlice), Service: service, Port: port})
		}
		s := &out[len(out)-1]
		s.Endpoints = append(s.Endpoints, SliceEndpoint{IP: p.IP, Pod: p.Name})
	}
	return out
}

// sliceObject is an EndpointSlice as the API server serialises it.
func sliceObject(ns string, s Slice, rv int) map[string]any {
	eps := make([]any, len(s.Endpoints))
	for i, e := range s.Endpoints {
		eps[i] = map[string]any{"addresses": []any{e.IP},
			"conditions": map[string]any{"ready": !e.Terminating, "serving": true, "terminating": e.Terminating},
			"nodeName":   "gpu-node-1", "zone": "zone-a",
			"targetRef": map[string]any{"kind": "Pod", "namespace": ns, "name": e.Pod, "uid": "3f8e2a34-" + e.Pod}}
	}
	return map[string]any{
		"kind": "EndpointSlice", "apiVersion": "discovery.k8s.io/v1",
		"metadata": map[string]any{
			"name": s.Name, "namespace": ns, "uid": "9a1c-" + s.Name, "resourceVersion": strconv.Itoa(rv),
			"creationTimestamp": "2026-11-26T20:00:00Z", "generateName": s.Service + "-",
			"labels":          map[string]any{"kubernetes.io/service-name": s.Service, "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Service", "name": s.Service, "controller": true}},
		},
		"addressType": "IPv4",
		"endpoints":   eps,
		"ports":       []any{map[string]any{"name": "http", "protocol": "TCP", "port": s.Port}},
	}
}

// SetSlices makes the namespace hold exactly these EndpointSlices: new names are ADDED, changed ones MODIFIED,
// missing ones DELETED, then a BOOKMARK.
func (k *KubeAPI) SetSlices(ns string, slices ...Slice) {
	objs := make(map[string]func(rv int) map[string]any, len(slices))
	for _, s := range slices {
		objs[s.Name] = func(rv int) map[string]any { return sliceObject(ns, s, rv) }
	}
	k.set("endpointslices", ns, "EndpointSlice", objs)
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

// collection is the resource and namespace of a namespaced collection path: /api/v1/namespaces/<ns>/pods or
// /apis/discovery.k8s.io/v1/namespaces/<ns>/endpointslices.
func collection(path string) (resource, ns string, ok bool) {
	if rest, found := strings.CutPrefix(path, "/api/v1/namespaces/"); found {
		ns, resource, _ = strings.Cut(rest, "/")
		return resource, ns, resource == "pods"
	}
	if rest, found := strings.CutPrefix(path, "/apis/discovery.k8s.io/v1/namespaces/"); found {
		ns, resource, _ = strings.Cut(rest, "/")
		return resource, ns, resource == "endpointslices"
	}
	return "", "", false
}

func (k *KubeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resource, ns, ok := collection(r.URL.Path)
	if r.Header.Get("Authorization") != "Bearer "+k.token {
		group := ""
		if resource == "endpointslices" {
			group = "discovery.k8s.io"
		}
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"%s is forbidden: User \"system:serviceaccount:grafana:grafana\" cannot list resource \"%s\" in API group \"%s\" in the namespace \"%s\"","reason":"Forbidden","code":403}`,
			resource, resource, group, ns)
		return
	}
	if !ok || ns == "" {
		http.NotFound(w, r)
		return
	}
	prefix, q := resource+"/"+ns+"/", r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("watch") == "true" {
		k.serveWatch(w, r, prefix)
		return
	}
	k.mu.Lock()
	k.lists++
	var keys []string
	for key, o := range k.objects {
		if strings.HasPrefix(key, prefix) && selects(q.Get("labelSelector"), o["metadata"].(map[string]any)["labels"].(map[string]any)) {
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
		items = append(items, k.objects[key])
	}
	rv := k.rv
	k.mu.Unlock()
	kind, api := "PodList", "v1"
	if resource == "endpointslices" {
		kind, api = "EndpointSliceList", "discovery.k8s.io/v1"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": kind, "apiVersion": api,
		"metadata": map[string]any{"resourceVersion": strconv.Itoa(rv), "continue": cont}, "items": items})
}

func (k *KubeAPI) serveWatch(w http.ResponseWriter, r *http.Request, prefix string) {
	if k.HostileWatch != nil {
		k.HostileWatch(w)
		return
	}
	from, _ := strconv.Atoi(r.URL.Query().Get("resourceVersion"))
	ch := make(chan loggedEvent, 1<<16)
	k.mu.Lock()
	for _, e := range k.log {
		if e.rv > from {
			ch <- e
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
		case e := <-ch:
			if e.prefix != prefix {
				continue
			}
			_, _ = w.Write(e.b)
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
