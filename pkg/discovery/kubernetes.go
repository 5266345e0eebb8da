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

// kubeSource follows pods through the API server's REST interface: a paged list (labelSelector, MaxKubernetesPage
// pods at a time), then a watch from the list's resourceVersion, per namespace, relisting when the watch ends or
// fails. It is a small hand-written client rather than client-go, whose informers would add megabytes to each of
// the plugin's five executables for the two requests used here (README: Kubernetes discovery).
type kubeSource struct {
	src    Source
	client *kubeClient
	// retry is the pause before relisting after a failure; listTimeout bounds one list (listTimeout by default).
	retry, listTimeout time.Duration

	once   sync.Once
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu     sync.Mutex
	cap    int
	spaces map[string]*podSet
}

// podSet is one namespace's pods as the last list and watch events left them.
type podSet struct {
	pods      map[string]pod
	truncated bool
	err       error
	listed    chan struct{} // closed after the first list ends (well or not)
}

// pod is the part of a Pod object discovery reads.
type pod struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels"`
		ResourceVersion   string            `json:"resourceVersion"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
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

type podList struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []pod `json:"items"`
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
	kc, err := newKubeClient(s.Kubeconfig, s.APIServer, configure)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return &kubeSource{src: s, client: kc, retry: 5 * time.Second, listTimeout: listTimeout, spaces: map[string]*podSet{}}, nil
}

func (k *kubeSource) Discover(ctx context.Context, max int) ([]Target, bool, error) {
	k.once.Do(func() { k.start(max) })
	k.mu.Lock()
	sets := make([]*podSet, 0, len(k.spaces))
	for _, ps := range k.spaces {
		sets = append(sets, ps)
	}
	k.mu.Unlock()
	for _, ps := range sets {
		select {
		case <-ps.listed:
		case <-ctx.Done():
			return nil, false, fmt.Errorf("kubernetes: the first pod list did not finish: %w", ctx.Err())
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []Target
	truncated := false
	var errs []error
	for _, ns := range k.namespaces() {
		ps := k.spaces[ns]
		truncated = truncated || ps.truncated
		if ps.err != nil {
			errs = append(errs, ps.err)
		}
		names := make([]string, 0, len(ps.pods))
		for n := range ps.pods {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			t, ok := k.target(ps.pods[n])
			if !ok {
				continue
			}
			if len(out) == max {
				return out, true, errors.Join(errs...)
			}
			out = append(out, t)
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

// start begins one list-and-watch loop per namespace, each keeping at most max pods.
func (k *kubeSource) start(max int) {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel, k.cap = cancel, max
	for _, ns := range k.namespaces() {
		ps := &podSet{pods: map[string]pod{}, listed: make(chan struct{})}
		k.spaces[ns] = ps
		k.done.Add(1)
		go k.follow(ctx, ns, ps)
	}
}

// follow lists and watches one namespace until ctx ends.
func (k *kubeSource) follow(ctx context.Context, ns string, ps *podSet) {
	defer k.done.Done()
	first := true
	for ctx.Err() == nil {
		rv, err := k.list(ctx, ns, ps)
		if first {
			close(ps.listed)
			first = false
		}
		if err == nil {
			k.mu.Lock()
			ps.err = nil
			k.mu.Unlock()
			err = k.watch(ctx, ns, rv, ps)
		}
		k.mu.Lock()
		ps.err = err
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

// podsURL is the pods collection of a namespace ("" for all) with the source's label selector and extra query.
func (k *kubeSource) podsURL(ns string, q url.Values) string {
	path := "/api/v1/pods"
	if ns != "" {
		path = "/api/v1/namespaces/" + url.PathEscape(ns) + "/pods"
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
			msg += " (the service account needs list and watch on pods: README, Kubernetes discovery)"
		}
		return nil, fmt.Errorf("the API server answered %.300s", msg)
	}
	return resp, nil
}

// list replaces the namespace's pods with a fresh paged list, keeping at most the source's cap, and returns the
// list's resourceVersion for the watch.
func (k *kubeSource) list(ctx context.Context, ns string, ps *podSet) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, k.listTimeout)
	defer cancel()
	pods := map[string]pod{}
	truncated := false
	cont, rv := "", ""
	for page := 0; ; page++ {
		q := url.Values{"limit": {strconv.Itoa(MaxKubernetesPage)}}
		if cont != "" {
			q.Set("continue", cont)
		}
		resp, err := k.get(ctx, k.podsURL(ns, q))
		if err != nil {
			return "", fmt.Errorf("kubernetes: listing pods in %s: %w", nsName(ns), err)
		}
		var l podList
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxKubernetesPageBytes+1))
		resp.Body.Close()
		if err == nil && len(b) > MaxKubernetesPageBytes {
			err = fmt.Errorf("a page of %d pods is over %d MB", MaxKubernetesPage, MaxKubernetesPageBytes>>20)
		}
		if err == nil {
			err = json.Unmarshal(b, &l)
		}
		if err != nil {
			return "", fmt.Errorf("kubernetes: listing pods in %s: %w", nsName(ns), err)
		}
		rv = l.Metadata.ResourceVersion
		for _, p := range l.Items {
			if len(pods) == k.cap {
				truncated = true
				break
			}
			pods[p.Metadata.Namespace+"/"+p.Metadata.Name] = p
		}
		cont = l.Metadata.Continue
		// A full set stops paging: the rest would be dropped anyway.
		if cont == "" || truncated {
			break
		}
		if len(l.Items) == 0 {
			return "", fmt.Errorf("kubernetes: listing pods in %s: the API server sent an empty page with a continue token", nsName(ns))
		}
	}
	k.mu.Lock()
	ps.pods, ps.truncated = pods, truncated
	k.mu.Unlock()
	return rv, nil
}

// watch applies the namespace's pod events from resourceVersion rv until the server ends the watch (nil), it fails,
// or ctx ends. Each event is one line of JSON of at most MaxWatchEventBytes.
func (k *kubeSource) watch(ctx context.Context, ns, rv string, ps *podSet) error {
	ctx, cancel := context.WithTimeout(ctx, watchTimeout+time.Minute)
	defer cancel()
	q := url.Values{"watch": {"true"}, "resourceVersion": {rv}, "allowWatchBookmarks": {"true"},
		"timeoutSeconds": {strconv.Itoa(int(watchTimeout.Seconds()))}}
	resp, err := k.get(ctx, k.podsURL(ns, q))
	if err != nil {
		return fmt.Errorf("kubernetes: watching pods in %s: %w", nsName(ns), err)
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := readLine(r, MaxWatchEventBytes)
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := k.apply(line, ps); perr != nil {
				return fmt.Errorf("kubernetes: watching pods in %s: %w", nsName(ns), perr)
			}
		}
		if err == io.EOF || (err != nil && ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("kubernetes: watching pods in %s: %w", nsName(ns), err)
		}
	}
}

// errRelist ends a watch whose resourceVersion the server no longer has (410 Gone): the loop lists again.
var errRelist = errors.New("the watch expired (410 Gone); listing again")

// apply is one watch event.
func (k *kubeSource) apply(line []byte, ps *podSet) error {
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
	var p pod
	if err := json.Unmarshal(ev.Object, &p); err != nil {
		return fmt.Errorf("a watch event's pod is not a Pod: %w", err)
	}
	key := p.Metadata.Namespace + "/" + p.Metadata.Name
	k.mu.Lock()
	defer k.mu.Unlock()
	_, known := ps.pods[key]
	switch {
	case ev.Type == "DELETED":
		delete(ps.pods, key)
	case known || len(ps.pods) < k.cap:
		ps.pods[key] = p
	default:
		ps.truncated = true
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

// target is a running pod's metrics address and labels: its own labels under their names (llm-d.ai/role), and
// Prometheus's __meta_kubernetes_* names for the rest.
func (k *kubeSource) target(p pod) (Target, bool) {
	if p.Status.Phase != "Running" || p.Status.PodIP == "" || p.Metadata.DeletionTimestamp != nil {
		return Target{}, false
	}
	port := k.src.Port
	if k.src.PortName != "" {
		port = 0
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == k.src.PortName {
					port = cp.ContainerPort
				}
			}
		}
	}
	if port <= 0 || port > 65535 {
		return Target{}, false
	}
	addr := hostPort(p.Status.PodIP, port)
	labels := make(map[string]string, len(p.Metadata.Labels)+5)
	n := 0
	for lk, lv := range p.Metadata.Labels {
		if n == MaxLabels || len(lk) > MaxValueBytes || len(lv) > MaxValueBytes {
			continue
		}
		labels[lk] = lv
		n++
	}
	labels[LabelAddress] = addr
	labels["__meta_kubernetes_namespace"] = p.Metadata.Namespace
	labels["__meta_kubernetes_pod_name"] = p.Metadata.Name
	labels["__meta_kubernetes_pod_ip"] = p.Status.PodIP
	labels["__meta_kubernetes_pod_node_name"] = p.Spec.NodeName
	return Target{Address: addr, Labels: labels}, true
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
