package promapi

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/internal/parallel"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// FamilySelector matches every series of the families InferScope reads (vllm.FamilyPrefixes).
var FamilySelector = vllm.FamilySelector

// DefaultNamesTTL is how long discovered names are reused: short, so a rolling upgrade that renames metrics
// shows up within a refresh or two, long enough that a dashboard's panels share one lookup.
const DefaultNamesTTL = 30 * time.Second

// Names is the set of sample names a server holds.
type Names map[string]bool

// Has reports whether the server holds a sample name.
func (n Names) Has(name string) bool { return n[name] }

// Sorted lists the names in order.
func (n Names) Sorted() []string {
	out := make([]string, 0, len(n))
	for k := range n {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Discovery caches which vLLM / Ascend / Dynamo names a server holds, per data-source instance.
type Discovery struct {
	Client *Client
	TTL    time.Duration
	// Lookback is how far back names count as held, so a renamed metric's old series still answer old ranges.
	Lookback time.Duration

	mu        sync.Mutex
	names     Names
	jobs      []string
	instances []string
	fetched   time.Time
	// layouts are Layouts' answers by bucket name, each refreshed like names; asking are the first lookups under way
	// by bucket name, which a caller needing one of those names waits for.
	layouts map[string]layout
	asking  map[string]*shared[map[string]layout]
	// gen counts Forget's calls: a background lookup started before one keeps nothing.
	gen                       uint64
	namesLookup, layoutLookup revalidator
}

// layout is one bucket name's layout (Layouts) and when the server was asked.
type layout struct {
	les     string
	fetched time.Time
}

// ttl is how long Names' and Layouts' answers are reused.
func (d *Discovery) ttl() time.Duration {
	if d.TTL == 0 {
		return DefaultNamesTTL
	}
	return d.TTL
}

// Names returns the held names, asking the server at most once per TTL; past it, the names found before serve while
// a background lookup replaces them (lookup.go).
func (d *Discovery) Names(ctx context.Context) (Names, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ageOf(d.fetched, time.Now(), d.ttl()) { // fetched is zero exactly when no names are kept (keep, Forget)
	case fresh:
		return d.names, nil
	case stale:
		gen := d.gen
		d.namesLookup.start(ctx, func(ctx context.Context) {
			found, err := d.lookupNames(ctx)
			if err != nil {
				return // the names found before serve on; the next refresh tries again
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.gen == gen { // not forgotten meanwhile
				d.keep(found)
			}
		})
		return d.names, nil
	}
	found, err := d.lookupNames(ctx)
	if err != nil {
		return nil, err
	}
	d.keep(found)
	return d.names, nil
}

// foundNames is one lookup of Names.
type foundNames struct {
	names           Names
	jobs, instances []string
	at              time.Time
}

// keep makes found the names served; the caller holds d.mu.
func (d *Discovery) keep(found foundNames) {
	d.names, d.jobs, d.instances, d.fetched = found.names, found.jobs, found.instances, found.at
}

// lookupNames asks the server which names, jobs and instances it holds.
func (d *Discovery) lookupNames(ctx context.Context) (foundNames, error) {
	lookback := d.Lookback
	if lookback == 0 {
		lookback = 6 * time.Hour
	}
	now := time.Now()
	// Three independent lookups at once: a cold dashboard waits for them before its first query. The names are the
	// server's whole list filtered here, which it answers from its index; asked with a selector, it would visit every
	// series of the families and of the recorded rates, hundreds of thousands on a large fleet.
	type label struct {
		name  string
		match []string
	}
	type values struct {
		vals []string
		err  error
	}
	found := parallel.Map([]label{{"__name__", nil}, {"job", []string{FamilySelector}}, {"instance", []string{FamilySelector}}},
		func(l label) (v values) {
			v.vals, _, v.err = d.Client.LabelValues(ctx, l.name, l.match, now.Add(-lookback), now)
			return v
		})
	for _, v := range found {
		if v.err != nil {
			return foundNames{}, v.err
		}
	}
	all, jobs, instances := found[0].vals, found[1].vals, found[2].vals
	var vals []string
	for _, v := range all {
		// The families' names (FamilySelector), and the series the generated recording rules write (RecordedName):
		// Generate reads those instead of computing rates.
		if familyName(v) || strings.HasPrefix(v, RecordedPrefix) && len(v) > len(RecordedPrefix) {
			vals = append(vals, v)
		}
	}
	if len(instances) > 0 {
		// The API server's few other families (vllm.APIServerFamilies), held only where an instance with vLLM families
		// holds them: many other targets expose process_* and some http_requests_total.
		api, _, err := d.Client.LabelValues(ctx, "__name__", []string{InstancesSelector(vllm.APIServerSelector, instances)}, now.Add(-lookback), now)
		if err != nil {
			return foundNames{}, err
		}
		vals = append(vals, api...)
	}
	n := make(Names, len(vals)+1)
	for _, v := range vals {
		n[v] = true
	}
	if len(jobs) > 0 {
		n[vllm.Up] = true // every target has up; jobs says which targets count
	}
	return foundNames{names: n, jobs: jobs, instances: instances, at: now}, nil
}

// familyName reports whether a sample name is one FamilySelector matches: one of vllm.FamilyPrefixes and more.
func familyName(name string) bool {
	for _, p := range vllm.FamilyPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return false
}

// InstancesSelector narrows a series selector to the given instances.
func InstancesSelector(sel string, instances []string) string {
	return strings.TrimSuffix(sel, "}") + `, instance=~` + strconv.Quote(AnyOf(instances)) + "}"
}

// AnyOf is a regular expression matching exactly the given values.
func AnyOf(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = regexp.QuoteMeta(v)
	}
	return strings.Join(quoted, "|")
}

// Instances returns the instance labels of the targets that expose vLLM, Ascend or Dynamo families (refreshed with
// Names): the API server's other families count only there.
func (d *Discovery) Instances(ctx context.Context) ([]string, error) {
	if _, err := d.Names(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.instances, nil
}

// Jobs returns the job labels of the targets that expose vLLM, Ascend or Dynamo families (refreshed with Names):
// `up` counts only for those, not for every target a shared server scrapes.
func (d *Discovery) Jobs(ctx context.Context) ([]string, error) {
	if _, err := d.Names(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.jobs, nil
}

// Recorded reports whether the server holds series of the generated recording rules (refreshed with Names).
func (d *Discovery) Recorded(ctx context.Context) (bool, error) {
	names, err := d.Names(ctx)
	if err != nil {
		return false, err
	}
	for n := range names {
		if strings.HasPrefix(n, RecordedPrefix) {
			return true, nil
		}
	}
	return false, nil
}

// Forget drops the cache, e.g. after a health check found new endpoints.
func (d *Discovery) Forget() {
	d.mu.Lock()
	d.names, d.layouts, d.asking, d.fetched = nil, nil, nil, time.Time{}
	d.gen++
	d.mu.Unlock()
}

// Layouts maps each of the given histogram bucket names (x_bucket) to its bucket layout on the server now, the le
// values as written, sorted and joined, when every series of it has that layout, and to "" when its series differ
// (a rolling upgrade, V0 beside V1 under one name) or it has none. One small instant query (series counted by name
// and le) over the names not asked within the TTL: only the histograms a query reads, not every bucket series the
// server holds. Past the TTL a layout serves while a background lookup asks again (lookup.go); a first lookup is
// shared by the callers needing its names and holds up no other. Where the names kept hold the recorded layouts
// (LayoutsName), their few series answer instead of every bucket series. PromQL leaves out the common-bucket clean-up
// where it cannot change a sum.
func (d *Discovery) Layouts(ctx context.Context, names []string) (map[string]string, error) {
	d.mu.Lock()
	now := time.Now()
	out := make(map[string]string, len(names))
	var ask, again []string
	var waits []*shared[map[string]layout]
	for _, n := range names {
		l, ok := d.layouts[n]
		switch a := ageOf(l.fetched, now, d.ttl()); {
		case ok && a == fresh:
			out[n] = l.les
		case ok && a == stale:
			out[n] = l.les
			if !slices.Contains(again, n) {
				again = append(again, n)
			}
		case d.asking[n] != nil:
			if !slices.Contains(waits, d.asking[n]) {
				waits = append(waits, d.asking[n])
			}
		case !slices.Contains(ask, n):
			ask = append(ask, n)
		}
	}
	gen := d.gen
	recorded := d.names.Has(LayoutsName) // as the names kept say: a lookup of its own would hold up the layouts
	if len(again) > 0 {
		d.layoutLookup.start(ctx, func(ctx context.Context) {
			found, err := d.lookupLayouts(ctx, again, recorded)
			if err != nil {
				return // the layouts found before serve on; the next query tries again
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.gen == gen {
				d.keepLayouts(found)
			}
		})
	}
	if len(ask) > 0 {
		// A first lookup runs without the lock: a cold dashboard's other panels read the names and ask their own
		// histograms meanwhile (on Prometheus 3 scraping 256 endpoints, each of these lookups took 40–65 ms, and every
		// panel waited behind them one after another). Its kept function reads s under d.mu, which this call holds
		// until s is set.
		var s *shared[map[string]layout]
		s = share(ctx, func(ctx context.Context) (map[string]layout, error) { return d.lookupLayouts(ctx, ask, recorded) },
			func(found map[string]layout, err error) {
				d.mu.Lock()
				defer d.mu.Unlock()
				for _, n := range ask {
					if d.asking[n] == s {
						delete(d.asking, n)
					}
				}
				if err == nil && d.gen == gen { // not forgotten meanwhile
					d.keepLayouts(found)
				}
			})
		if d.asking == nil {
			d.asking = map[string]*shared[map[string]layout]{}
		}
		for _, n := range ask {
			d.asking[n] = s
		}
		waits = append(waits, s)
	}
	d.mu.Unlock()
	for _, s := range waits {
		found, err := s.wait(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if l, ok := found[n]; ok {
				out[n] = l.les
			}
		}
	}
	return out, nil
}

// keepLayouts keeps found layouts by name; the caller holds d.mu.
func (d *Discovery) keepLayouts(found map[string]layout) {
	if d.layouts == nil {
		d.layouts = map[string]layout{}
	}
	for n, l := range found {
		d.layouts[n] = l
	}
}

// lookupLayouts asks the server for the layouts of the bucket names ask: from the recorded counts where recorded (the
// server holds LayoutsName), else, and for the names those do not answer, by counting the bucket series.
func (d *Discovery) lookupLayouts(ctx context.Context, ask []string, recorded bool) (map[string]layout, error) {
	now := time.Now()
	ask = slices.Sorted(slices.Values(ask))
	counts := map[string]map[string]float64{}
	keep := func(vec model.Vector, label model.LabelName) {
		for _, s := range vec {
			name := string(s.Metric[label])
			if counts[name] == nil {
				counts[name] = map[string]float64{}
			}
			counts[name][string(s.Metric["le"])] = float64(s.Value)
		}
	}
	// Where the server records the layouts (LayoutsName), their few series answer for the names they cover; summed,
	// as the count is over every series, where several servers record them (shards behind one query API). A name they
	// do not answer (no series, or a rules file from before it) is counted below.
	rest := ask
	if recorded {
		recordedNames := LayoutNames() // once, not per name asked
		if covered := slices.DeleteFunc(slices.Clone(ask), func(n string) bool { return !slices.Contains(recordedNames, n) }); len(covered) > 0 {
			vec, _, err := d.Client.Query(ctx, "sum by ("+LayoutLabel+", le) ("+LayoutsName+"{"+LayoutLabel+"=~"+strconv.Quote(AnyOf(covered))+"})", now)
			if err != nil {
				return nil, err
			}
			keep(vec, LayoutLabel)
			rest = slices.DeleteFunc(slices.Clone(ask), func(n string) bool { return counts[n] != nil })
		}
	}
	if len(rest) > 0 {
		vec, _, err := d.Client.Query(ctx, layoutCount(rest), now)
		if err != nil {
			return nil, err
		}
		keep(vec, model.MetricNameLabel)
	}
	found := make(map[string]layout, len(ask))
	for _, name := range ask {
		les := counts[name]
		inf, ok := les["+Inf"]
		uniform := ok
		keys := make([]string, 0, len(les))
		for le, n := range les {
			uniform = uniform && n == inf
			keys = append(keys, le)
		}
		sort.Strings(keys)
		l := ""
		if uniform {
			l = strings.Join(keys, ",")
		}
		found[name] = layout{les: l, fetched: now}
	}
	return found, nil
}
