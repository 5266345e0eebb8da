package discovery

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"
)

// kubeSource follows pods or EndpointSlices (the source's kubernetesRole) through the API server's REST interface: a
// paged list (labelSelector, MaxKubernetesPage objects at a time), then a watch from the list's resourceVersion, per
// namespace, relisting when the watch ends or fails. It is a small hand-written client rather than client-go, whose
// informers would add megabytes to each of the plugin's five executables for the two requests used here (README:
// Kubernetes discovery).
type kubeSource struct {
	src    Source
	res    kubeResource
	client *kubeClient
	// retry is the pause before relisting after a failure; listTimeout bounds one list (listTimeout by default).
	retry, listTimeout time.Duration

	once   sync.Once
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu     sync.Mutex
	cap    int
	spaces map[string]*objectSet
}

// objectSet is one namespace's objects as the last list and watch events left them; held is the sum of their
// weights, at most the source's cap.
type objectSet struct {
	objects   map[string]kubeObject
	held      int
	truncated bool
	err       error
	listed    chan struct{} // closed after the first list ends (well or not)
}

// put stores o under its key if the set's weight stays within limit, and says whether it did; k.mu is held.
func (os *objectSet) put(o kubeObject, limit int) bool {
	key := o.key()
	held := os.held + o.weight()
	if old, ok := os.objects[key]; ok {
		held -= old.weight()
	}
	if held > limit {
		os.truncated = true
		return false
	}
	os.objects[key], os.held = o, held
	return true
}

// remove deletes the object under key; k.mu is held.
func (os *objectSet) remove(key string) {
	if old, ok := os.objects[key]; ok {
		os.held -= old.weight()
		delete(os.objects, key)
	}
}

// kubeObject is one listed or watched object: a pod or an EndpointSlice.
type kubeObject interface {
	key() string
	// weight is how many targets the object may give, which it counts against the source's cap.
	weight() int
	// targets are the object's targets under the source's port, in a stable order.
	targets(s Source) []Target
}

// kubeResource is what a Kubernetes role lists and watches.
type kubeResource struct {
	// api is the group's path, plural the resource, rbac what a 403 says the service account needs.
	api, plural, rbac string
	// page is how many objects one list request asks for.
	page   int
	decode func([]byte) (kubeObject, error)
}

var kubeResources = map[string]kubeResource{
	KubernetesRolePod: {api: "/api/v1", plural: "pods", rbac: "list and watch on pods", page: MaxKubernetesPage,
		decode: func(b []byte) (kubeObject, error) { var p pod; err := json.Unmarshal(b, &p); return &p, err }},
	KubernetesRoleEndpointSlice: {api: "/apis/discovery.k8s.io/v1", plural: "endpointslices", rbac: "list and watch on endpointslices (discovery.k8s.io)",
		// A slice holds up to 1000 endpoints (a few hundred KB): fewer per page keep a page within its bound.
		page: MaxKubernetesPage / 10,
		decode: func(b []byte) (kubeObject, error) {
			var s endpointSlice
			err := json.Unmarshal(b, &s)
			return &s, err
		}},
}

// objectMeta is the part of an object's metadata discovery reads.
type objectMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	Labels            map[string]string `json:"labels"`
	ResourceVersion   string            `json:"resourceVersion"`
	DeletionTimestamp *string           `json:"deletionTimestamp"`
}

// pod is the part of a Pod object discovery reads.
type pod struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		NodeName   string `json:"nodeName"`
		Containers []struct {
			Name  string `json:"name"`
			Ports []struct {
				Name          string `json:"name"`
				ContainerPort int    `json:"containerPort"`
				Protocol      string `json:"protocol"`
			} `json:"ports"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
		PodIP string `json:"podIP"`
	} `json:"status"`
}

// objectList is one page of a list; its items are decoded by the resource.
type objectList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watchTimeout is how long one watch request lasts (the server ends it; the client gives it a minute more);
// listTimeout bounds one list, all its pages, so a server that stops sending mid-page cannot hold the source.
const (
	watchTimeout = 5 * time.Minute
	listTimeout  = time.Minute
)

func newKubernetes(s Source, configure func(*http.Transport)) (*kubeSource, error) {
	res, ok := kubeResources[s.kubernetesRole()]
	if !ok {
		return nil, fmt.Errorf("kubernetes: role %.32q is not pod or endpointslice", s.KubernetesRole)
	}
	kc, err := newKubeClient(s.Kubeconfig, s.APIServer, configure)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return &kubeSource{src: s, res: res, client: kc, retry: 5 * time.Second, listTimeout: listTimeout, spaces: map[string]*objectSet{}}, nil
}

func (k *kubeSource) Discover(ctx context.Context, max int) ([]Target, bool, error) {
	k.once.Do(func() { k.start(max) })
	k.mu.Lock()
	sets := make([]*objectSet, 0, len(k.spaces))
	for _, os := range k.spaces {
		sets = append(sets, os)
	}
	k.mu.Unlock()
	for _, os := range sets {
		select {
		case <-os.listed:
		case <-ctx.Done():
			return nil, false, fmt.Errorf("kubernetes: the first %s list did not finish: %w", k.res.plural, ctx.Err())
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []Target
	truncated := false
	var errs []error
	for _, ns := range k.namespaces() {
		os := k.spaces[ns]
		truncated = truncated || os.truncated
		if os.err != nil {
			errs = append(errs, os.err)
		}
		keys := make([]string, 0, len(os.objects))
		for key := range os.objects {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			for _, t := range os.objects[key].targets(k.src) {
				if len(out) == max {
					return out, true, errors.Join(errs...)
				}
				out = append(out, t)
			}
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, truncated, errors.Join(errs...)
	}
	return out, truncated, errors.Join(errs...)
}

// namespaces are the source's namespaces; "" is every namespace.
func (k *kubeSource) namespaces() []string {
	if len(k.src.Namespaces) == 0 {
		return []string{""}
	}
	return k.src.Namespaces
}

// start begins one list-and-watch loop per namespace, each keeping objects of at most max targets.
func (k *kubeSource) start(max int) {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel, k.cap = cancel, max
	for _, ns := range k.namespaces() {
		os := &objectSet{objects: map[string]kubeObject{}, listed: make(chan struct{})}
		k.spaces[ns] = os
		k.done.Add(1)
		go k.follow(ctx, ns, os)
	}
}

// follow lists and watches one namespace until ctx ends.
func (k *kubeSource) follow(ctx context.Context, ns string, os *objectSet) {
	defer k.done.Done()
	first := true
	for ctx.Err() == nil {
		rv, err := k.list(ctx, ns, os)
		// The list's outcome is recorded before the first list is announced: Discover reads it once listed closes.
		k.mu.Lock()
		os.err = err
		k.mu.Unlock()
		if first {
			close(os.listed)
			first = false
		}
		if err == nil {
			err = k.watch(ctx, ns, rv, os)
		}
		k.mu.Lock()
		os.err = err
		k.mu.Unlock()
		if err == nil {
			continue // the watch ended as watches do: list again
		}
		select {
		case <-ctx.Done():
		case <-time.After(k.retry):
		}
	}
}

// collectionURL is the resource's collection in a namespace ("" for all) with the source's label selector and
// extra query.
func (k *kubeSource) collectionURL(ns string, q url.Values) string {
	path := k.res.api + "/" + k.res.plural
	if ns != "" {
		path = k.res.api + "/namespaces/" + url.PathEscape(ns) + "/" + k.res.plural
	}
	if k.src.LabelSelector != "" {
		q.Set("labelSelector", k.src.LabelSelector)
	}
	return k.client.server + path + "?" + q.Encode()
}

func (k *kubeSource) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if err := k.client.authorize(req); err != nil {
		return nil, err
	}
	resp, err := k.client.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		var st struct {
			Message string `json:"message"`
		}
		msg := resp.Status
		if json.Unmarshal(b, &st) == nil && st.Message != "" {
			msg += ": " + st.Message
		}
		if resp.StatusCode == http.StatusForbidden {
			msg += " (the service account needs " + k.res.rbac + ": README, Kubernetes discovery)"
		}
		return nil, fmt.Errorf("the API server answered %.300s", msg)
	}
	return resp, nil
}

// list replaces the namespace's objects with a fresh paged list, keeping objects of at most the source's cap of
// targets, and returns the list's resourceVersion for the watch.
func (k *kubeSource) list(ctx context.Context, ns string, os *objectSet) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, k.listTimeout)
	defer cancel()
	fresh := &objectSet{objects: map[string]kubeObject{}}
	cont, rv := "", ""
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("kubernetes: listing %s in %s: %w", k.res.plural, nsName(ns), err)
	}
	for {
		q := url.Values{"limit": {strconv.Itoa(k.res.page)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		resp, err := k.get(ctx, k.collectionURL(ns, q))
		if err != nil {
			return fail(err)
		}
		var l objectList
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxKubernetesPageBytes+1))
		resp.Body.Close()
		if err == nil && len(b) > MaxKubernetesPageBytes {
			err = fmt.Errorf("a page of %d %s is over %d MB", k.res.page, k.res.plural, MaxKubernetesPageBytes>>20)
		}
		if err == nil {
			err = json.Unmarshal(b, &l)
		}
		if err != nil {
			return fail(err)
		}
		rv = l.Metadata.ResourceVersion
		for _, raw := range l.Items {
			o, err := k.res.decode(raw)
			if err != nil {
				return fail(fmt.Errorf("an item is not one of %s: %w", k.res.plural, err))
			}
			// The first object over what is left of the cap ends the list (put notes the cut): decoding the rest of a
			// page of large slices, for one that might still fit, would cost more than the cut saves.
			if !fresh.put(o, k.cap) {
				break
			}
		}
		cont = l.Metadata.Continue
		// A full set stops paging: the rest would be dropped anyway.
		if cont == "" || fresh.truncated {
			break
		}
		if len(l.Items) == 0 {
			return fail(errors.New("the API server sent an empty page with a continue token"))
		}
	}
	k.mu.Lock()
	os.objects, os.held, os.truncated = fresh.objects, fresh.held, fresh.truncated
	k.mu.Unlock()
	return rv, nil
}

// watch applies the namespace's events from resourceVersion rv until the server ends the watch (nil), it fails,
// or ctx ends. Each event is one line of JSON of at most MaxWatchEventBytes.
func (k *kubeSource) watch(ctx context.Context, ns, rv string, os *objectSet) error {
	ctx, cancel := context.WithTimeout(ctx, watchTimeout+time.Minute)
	defer cancel()
	q := url.Values{"watch": {"true"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"},
		"timeoutSeconds": {strconv.Itoa(int(watchTimeout.Seconds()))}}
	resp, err := k.get(ctx, k.collectionURL(ns, q))
	if err != nil {
		return fmt.Errorf("kubernetes: watching %s in %s: %w", k.res.plural, nsName(ns), err)
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := readLine(r, MaxWatchEventBytes)
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := k.apply(line, os); perr != nil {
				return fmt.Errorf("kubernetes: watching %s in %s: %w", k.res.plural, nsName(ns), perr)
			}
		}
		if err == io.EOF || (err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("kubernetes: watching %s in %s: %w", k.res.plural, nsName(ns), err)
		}
	}
}

// errRelist ends a watch whose resourceVersion the server no longer has (410 Gone): the loop lists again.
var errRelist = errors.New("the watch expired (410 Gone); listing again")

// apply is one watch event.
func (k *kubeSource) apply(line []byte, os *objectSet) error {
	var ev watchEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		return fmt.Errorf("a watch event is not JSON: %w", err)
	}
	switch ev.Type {
	case "BOOKMARK":
		return nil
	case "ERROR":
		return errRelist
	case "ADDED", "MODIFIED", "DELETED":
	default:
		return fmt.Errorf("unknown watch event type %.32q", ev.Type)
	}
	o, err := k.res.decode(ev.Object)
	if err != nil {
		return fmt.Errorf("a watch event's object is not one of %s: %w", k.res.plural, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if ev.Type == "DELETED" {
		os.remove(o.key())
	} else {
		os.put(o, k.cap)
	}
	return nil
}

// readLine reads one newline-ended line of at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, fmt.Errorf("a watch event is over %d MB", limit>>20)
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

func (p *pod) key() string { return p.Metadata.Namespace + "/" + p.Metadata.Name }
func (p *pod) weight() int { return 1 }

// targets is a running pod's metrics address and labels: its own labels under their names (llm-d.ai/role), and
// Prometheus's __meta_kubernetes_* names for the rest.
func (p *pod) targets(s Source) []Target {
	if p.Status.Phase != "Running" || p.Status.PodIP == "" || p.Metadata.DeletionTimestamp != nil {
		return nil
	}
	port := s.Port
	if s.PortName != "" {
		port = 0
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == s.PortName {
					port = cp.ContainerPort
				}
			}
		}
	}
	if port <= 0 || port > 65535 {
		return nil
	}
	addr := hostPort(p.Status.PodIP, port)
	labels := ownLabels(p.Metadata.Labels, 5)
	labels[LabelAddress] = addr
	labels["__meta_kubernetes_namespace"] = p.Metadata.Namespace
	labels["__meta_kubernetes_pod_name"] = p.Metadata.Name
	labels["__meta_kubernetes_pod_ip"] = p.Status.PodIP
	labels["__meta_kubernetes_pod_node_name"] = p.Spec.NodeName
	return []Target{{Address: addr, Labels: labels}}
}

// ownLabels copies an object's labels under their own names, at most MaxLabels of bounded size, leaving room for
// extra more.
func ownLabels(from map[string]string, extra int) map[string]string {
	labels := make(map[string]string, min(len(from), MaxLabels)+extra)
	n := 0
	for lk, lv := range from {
		if n == MaxLabels || len(lk) > MaxValueBytes || len(lv) > MaxValueBytes {
			continue
		}
		labels[lk] = lv
		n++
	}
	return labels
}

func nsName(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return "namespace " + ns
}

// Close stops the watches and waits for them.
func (k *kubeSource) Close() {
	k.once.Do(func() {}) // a source never asked starts nothing later
	if k.cancel != nil {
		k.cancel()
	}
	k.done.Wait()
}
