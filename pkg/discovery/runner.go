package discovery

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Endpoint is one discovered target after relabelling: what direct mode scrapes.
type Endpoint struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Source is the name of the source that found it.
	Source string `json:"source"`
	// Role and Model are the values of the source's role and model labels, when it names them.
	Role  string `json:"role,omitempty"`
	Model string `json:"model,omitempty"`
}

// Report is what one source found in the latest round.
type Report struct {
	Source string `json:"source"`
	Type   Type   `json:"type"`
	// Found counts the targets the source answered; Kept those that became endpoints (after keep/drop, duplicates
	// and the endpoint limit).
	Found int `json:"found"`
	Kept  int `json:"kept"`
	// Error is why the latest round failed; the source's previous targets are still used (Stale).
	Error string `json:"error,omitempty"`
	Stale bool   `json:"stale,omitempty"`
}

// Result is one discovery round: the endpoints, a report per source, and notices for what was cut, renamed or
// refused (the sources' errors are in their reports: Problems).
type Result struct {
	Endpoints []Endpoint `json:"endpoints"`
	Reports   []Report   `json:"reports"`
	Notices   []string   `json:"notices,omitempty"`
}

// Options builds a Runner.
type Options struct {
	// Client asks http_sd URLs: the data source's client, with its credentials and egress rules.
	Client *http.Client
	// ConfigureTransport applies the data source's egress rules to the Kubernetes client's transport.
	ConfigureTransport func(*http.Transport)
	// MaxEndpoints bounds the endpoints of a round; Reserved are the static endpoints' names and URLs, which
	// discovered endpoints may not take (and which count against MaxEndpoints).
	MaxEndpoints int
	Reserved     []Endpoint
	// CheckURL refuses a discovered URL the data source may not scrape (egress rules); nil accepts all.
	CheckURL func(string) error
}

// Runner asks every source and merges their answers.
type Runner struct {
	opts    Options
	sources []running
	mu      sync.Mutex // one round at a time: sources keep state
}

type running struct {
	cfg  Source
	name string
	d    Discoverer
	err  error // the source could not start (bad kubeconfig): reported every round
	rules
	def   []namePart
	last  []Target // the latest good answer, used while the source fails
	trunc bool
	ok    bool
}

// NewRunner starts the sources; each must have passed Validate.
func NewRunner(sources []Source, opts Options) *Runner {
	r := &Runner{opts: opts}
	for i, s := range sources {
		rs := running{cfg: s, name: s.DisplayName(i + 1)}
		rs.rules, rs.err = s.Relabel.compile()
		rs.def, _ = parseTemplate("{" + LabelAddress + "}")
		if rs.err == nil {
			switch s.Type {
			case TypeDNS:
				rs.d = newDNS(s)
			case TypeKubernetes:
				rs.def, _ = parseTemplate("{__meta_kubernetes_pod_name}")
				var k *kubeSource
				if k, rs.err = newKubernetes(s, opts.ConfigureTransport); rs.err == nil {
					rs.d = k
				}
			case TypeHTTP:
				rs.d = newHTTP(s, opts.Client)
			case TypeFile:
				rs.d = newFile(s)
			default:
				rs.err = fmt.Errorf("unknown source type %.16q", s.Type)
			}
		}
		r.sources = append(r.sources, rs)
	}
	return r
}

// Close ends every source's background work.
func (r *Runner) Close() {
	for _, s := range r.sources {
		if s.d != nil {
			s.d.Close()
		}
	}
}

// sourceTimeout bounds one source's answer in a round, whatever the source (each also bounds its own requests).
const sourceTimeout = 2 * time.Minute

// Refresh asks every source now (one after another; a source bounds its own time) and merges the answers.
func (r *Runner) Refresh(ctx context.Context) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	budget := r.opts.MaxEndpoints - len(r.opts.Reserved)
	for i := range r.sources {
		s := &r.sources[i]
		if s.d == nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, sourceTimeout)
		ts, trunc, err := s.d.Discover(sctx, max(budget, 0)+1)
		cancel()
		s.err = err
		// A failed round keeps the source's previous targets, unless the source answered some anyway (a Kubernetes
		// watch that failed still holds the pods it followed).
		if err == nil || ts != nil {
			s.last, s.trunc, s.ok = ts, trunc, true
		}
	}
	return r.merge()
}

// merge turns the sources' latest answers into endpoints: relabelled, each target once, names unique, at most
// MaxEndpoints with the static ones.
func (r *Runner) merge() Result {
	res := Result{Endpoints: []Endpoint{}}
	names, urls := map[string]string{}, map[string]string{}
	for _, e := range r.opts.Reserved {
		names[e.Name], urls[urlKey(e.URL)] = "static endpoints", "static endpoints"
	}
	budget := r.opts.MaxEndpoints - len(r.opts.Reserved)
	cut, renamed, refused := 0, 0, 0
	for _, s := range r.sources {
		rep := Report{Source: s.name, Type: s.cfg.Type, Found: len(s.last)}
		if s.err != nil {
			rep.Error = s.err.Error()
			rep.Stale = s.ok
		}
		if s.trunc {
			res.Notices = append(res.Notices, fmt.Sprintf("%s found more than %d targets; the rest are left out (at most %d endpoints per data source)",
				s.name, max(budget, 0), r.opts.MaxEndpoints))
		}
		// Candidates in a stable order, so the same answer keeps the same endpoints and names round after round.
		var cands []Endpoint
		for _, t := range s.last {
			if !s.keeps(t.Labels) {
				continue
			}
			src := s.cfg
			if v := t.Labels[LabelScheme]; v == "http" || v == "https" {
				src.Scheme = v
			}
			if v := t.Labels[LabelMetricsPath]; strings.HasPrefix(v, "/") {
				src.MetricsPath = v
			}
			e := Endpoint{Name: s.nameOf(t.Labels, s.def), URL: src.targetURL(t.Address), Source: s.name}
			if s.role != "" {
				e.Role = t.Labels[s.role]
			}
			if s.model != "" {
				e.Model = t.Labels[s.model]
			}
			cands = append(cands, e)
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].Name < cands[j].Name })
		for _, e := range cands {
			key := urlKey(e.URL)
			if _, dup := urls[key]; dup {
				continue // the same target from two sources, or twice from one: scraped once
			}
			if r.opts.CheckURL != nil {
				if err := r.opts.CheckURL(e.URL); err != nil {
					refused++
					continue
				}
			}
			if len(res.Endpoints) >= budget {
				cut++
				continue
			}
			if _, dup := names[e.Name]; dup {
				// Two targets under one name would share history: the later one is told apart by its address,
				// which stays the same round after round.
				e.Name = e.Name + "@" + hostOf(e.URL)
				renamed++
				if _, again := names[e.Name]; again {
					continue
				}
			}
			names[e.Name], urls[key] = s.name, s.name
			res.Endpoints = append(res.Endpoints, e)
			rep.Kept++
		}
		res.Reports = append(res.Reports, rep)
	}
	if cut > 0 {
		res.Notices = append(res.Notices, fmt.Sprintf("discovery: %d target(s) left out: at most %d endpoints per data source (%d static)",
			cut, r.opts.MaxEndpoints, len(r.opts.Reserved)))
	}
	if renamed > 0 {
		res.Notices = append(res.Notices, fmt.Sprintf("discovery: %d target(s) share a name with another endpoint; each is named name@host:port", renamed))
	}
	if refused > 0 {
		res.Notices = append(res.Notices, fmt.Sprintf("discovery: %d target(s) refused by the data source's egress rules (link-local addresses)", refused))
	}
	return res
}

// Problems are the failed sources' errors, one line each, saying when their previous targets are still used.
func (r Result) Problems() []string {
	var out []string
	for _, rep := range r.Reports {
		if rep.Error != "" {
			note := rep.Source + ": " + rep.Error
			if rep.Stale {
				note += " (using its previous targets)"
			}
			out = append(out, note)
		}
	}
	return out
}

// urlKey identifies a target URL: scheme, lower-case host and path.
func urlKey(u string) string { return strings.ToLower(u) }

// hostOf is the host:port of an endpoint URL made by targetURL.
func hostOf(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	host, _, _ := strings.Cut(rest, "/")
	return host
}
