package datasource

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
	"github.com/inferscope/inferscope-vllm/pkg/scraper"
)

// fleet keeps direct mode's targets in step with its discovery sources: it asks them every DiscoveryInterval, gives
// the scraper the configured endpoints plus what they found, and scrapes new targets at once.
type fleet struct {
	static   []scraper.Target
	runner   *discovery.Runner
	scraper  *scraper.Scraper
	interval time.Duration
	scrub    *redact.Scrubber

	mu     sync.Mutex
	latest discovery.Result
	// first is closed after the first round, which queries wait for (bounded) so a new instance answers whole.
	first     chan struct{}
	firstOnce sync.Once
	stop      chan struct{}
	done      chan struct{}
}

// newFleet starts following the sources; nil when the settings have none.
func newFleet(st Settings, static []scraper.Target, sc *scraper.Scraper, client *http.Client, scrub *redact.Scrubber) *fleet {
	if len(st.Discovery) == 0 {
		return nil
	}
	reserved := make([]discovery.Endpoint, len(static))
	for i, t := range static {
		reserved[i] = discovery.Endpoint{Name: t.Name, URL: t.URL}
	}
	policy := st.egress(false)
	f := &fleet{static: static, scraper: sc, interval: time.Duration(st.DiscoveryInterval), scrub: scrub,
		first: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
		runner: discovery.NewRunner(st.Discovery, discovery.Options{Client: client, ConfigureTransport: policy.ConfigureTransport,
			MaxEndpoints: MaxEndpoints, Reserved: reserved, CheckURL: policy.CheckURL})}
	go f.run()
	return f
}

func (f *fleet) run() {
	defer close(f.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-f.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(f.interval)
	defer tick.Stop()
	for {
		f.refresh(ctx)
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
	}
}

// refresh runs one discovery round and applies it.
func (f *fleet) refresh(ctx context.Context) discovery.Result {
	res := f.runner.Refresh(ctx)
	if ctx.Err() != nil {
		return res
	}
	for i := range res.Reports {
		res.Reports[i].Error = f.scrub.Text(res.Reports[i].Error)
	}
	for i := range res.Notices {
		res.Notices[i] = f.scrub.Text(res.Notices[i])
	}
	targets := slices.Clone(f.static)
	for _, e := range res.Endpoints {
		targets = append(targets, scraper.Target{Name: e.Name, URL: e.URL, Source: e.Source, Role: e.Role, Model: e.Model})
	}
	f.scraper.SetTargets(targets)
	f.mu.Lock()
	f.latest = res
	f.mu.Unlock()
	f.firstOnce.Do(func() { close(f.first) })
	f.scraper.ScrapePending(ctx)
	return res
}

// waitFirst waits for the first round, or ctx.
func (f *fleet) waitFirst(ctx context.Context) {
	if f == nil {
		return
	}
	select {
	case <-f.first:
	case <-ctx.Done():
	}
}

// result is the latest round's.
func (f *fleet) result() discovery.Result {
	if f == nil {
		return discovery.Result{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.latest
}

// close stops the rounds and the sources' watches.
func (f *fleet) close() {
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
	f.runner.Close()
}

// declaredRoles are the roles the discovered endpoints' labels state (the source's roleLabel), by name: of the
// targets scraped now and of the departed ones, whose history still answers queries over their time.
func (f *fleet) declaredRoles(context.Context) map[string]string {
	out := map[string]string{}
	for _, st := range f.scraper.Statuses() {
		if st.Role != "" {
			out[st.Name] = st.Role
		}
	}
	return out
}
