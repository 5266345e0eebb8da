// Package scraper scrapes a data source's vLLM endpoints on an interval and records what they expose into
// history, keeping each endpoint's latest status (error, flavor, ranks) for health checks and notices.
package scraper

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Target is one endpoint to scrape.
type Target struct {
	Name string
	URL  string
	// Source names the discovery source that found the target ("" for a configured one); Role and Model are what
	// the source's labels say the endpoint is.
	Source, Role, Model string
}

// Recorder is where scrapes go; the history store implements it.
type Recorder interface {
	// Append records sc, keeping nothing of it but strings: the scraper releases sc once Append returns. same
	// reports that sc held exactly the series of the endpoint's previous Append (history.Store.Append); false when
	// unsure.
	Append(endpoint string, t int64, sc *exposition.Scrape) (same bool)
	// AdvanceWatermark is the scraper's word that nothing more is appended at or before t (Scraper.Settle).
	AdvanceWatermark(t int64)
}

// Options tunes a Scraper.
type Options struct {
	Interval time.Duration
	Timeout  time.Duration
	// MaxBodyBytes and MaxSamples bound one scrape; exceeding them fails that endpoint's scrape with a clear error.
	MaxBodyBytes int64
	MaxSamples   int
	// Concurrency bounds simultaneous scrapes, so a large fleet does not open hundreds of connections at once.
	Concurrency int
	Client      *http.Client
	// Scrub removes the data source's secrets from scrape errors, which quote the server's answer.
	Scrub *redact.Scrubber
	// GoneFor is how long a departed target's status stays listed (as gone): its history's retention. 0 keeps it
	// until MaxGone newer departures push it out.
	GoneFor time.Duration
}

// MaxGone bounds the departed targets whose status is kept.
const MaxGone = 1000

// Defaults for the limits, sized from real vLLM payloads (an 8-engine server with every option is ~500 KB).
const (
	DefaultMaxBodyBytes = 16 << 20
	DefaultMaxSamples   = 50_000 // kept (vLLM, Ascend, Dynamo) series; an 8-engine server exposes about 4 300
	DefaultConcurrency  = 16
)

// Status is an endpoint's latest scrape outcome.
type Status struct {
	Name      string          `json:"name"`
	URL       string          `json:"url"`
	Up        bool            `json:"up"`
	Error     string          `json:"error,omitempty"`
	LastTry   time.Time       `json:"lastScrape"`
	Duration  time.Duration   `json:"durationNs"`
	Samples   int             `json:"samples"`
	BodyBytes int64           `json:"bodyBytes"`
	Detection *vllm.Detection `json:"detection,omitempty"`
	// Version is the vLLM release the endpoint's /version answered, asked every VersionInterval; "" when unknown.
	Version string `json:"version,omitempty"`
	// Gone says the target left the fleet (discovery no longer lists it) at GoneSince: it is not scraped, not down,
	// and its history stays until retention ends.
	Gone      bool       `json:"gone,omitempty"`
	GoneSince *time.Time `json:"goneSince,omitempty"`
	// Source, Role and Model are the target's.
	Source string `json:"source,omitempty"`
	Role   string `json:"role,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Scraper scrapes its targets every Interval until Stop.
type Scraper struct {
	// targets change only between rounds (SetTargets holds round) and under mu.
	targets []Target
	opts    Options
	rec     Recorder
	// gone holds the departed targets' statuses, oldest first.
	gone []Status

	// round serialises scrape rounds: a health check's round waits for the background one, so history always
	// receives an endpoint's scrapes in time order. Every Append happens under it (Settle relies on that). started
	// counts the rounds begun.
	round   sync.Mutex
	started atomic.Uint64
	// roundFrom is when the holder of round took it (lockRound): nothing it appends is stamped earlier.
	roundFrom atomic.Int64
	mu        sync.RWMutex
	status    map[string]Status
	subs      map[chan int64]struct{}
	// tried holds, per target, a channel closed when its first scrape has finished, so that the first queries
	// after Grafana creates the instance can wait for data instead of answering empty.
	tried map[string]chan struct{}

	stop chan struct{}
	done chan struct{}
	once sync.Once

	// versions are the endpoints' releases, asked in the background so a slow /version never delays a scrape;
	// bg ends them at Stop and asking counts those in flight.
	versions map[string]*versionInfo
	bg       context.Context
	bgCancel context.CancelFunc
	asking   sync.WaitGroup
}

// New builds a Scraper; call Start to begin scraping.
func New(targets []Target, rec Recorder, opts Options) *Scraper {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxSamples == 0 {
		opts.MaxSamples = DefaultMaxSamples
	}
	s := &Scraper{targets: targets, opts: opts, rec: rec, status: map[string]Status{}, subs: map[chan int64]struct{}{},
		tried: map[string]chan struct{}{}, stop: make(chan struct{}), done: make(chan struct{}), versions: map[string]*versionInfo{}}
	s.bg, s.bgCancel = context.WithCancel(context.Background())
	for _, t := range targets {
		s.status[t.Name] = initial(t)
		s.tried[t.Name] = make(chan struct{})
	}
	return s
}

// initial is a target's status before its first scrape.
func initial(t Target) Status {
	return Status{Name: t.Name, URL: redact.URL(t.URL), Error: "not scraped yet", Source: t.Source, Role: t.Role, Model: t.Model}
}

// SetTargets replaces the targets between two rounds: a new one is scraped from the next round on; a departed one
// stops being scraped, its series end with staleness markers now (so "up" stops rather than dropping to 0 and no
// down alert fires), its history stays, and its status is listed as gone. A target whose URL, role or model
// changed keeps its name's history.
func (s *Scraper) SetTargets(targets []Target) {
	s.lockRound()
	defer s.round.Unlock()
	now := time.Now()
	next := make(map[string]bool, len(targets))
	s.mu.Lock()
	old := make(map[string]Target, len(s.targets))
	for _, t := range s.targets {
		old[t.Name] = t
	}
	for _, t := range targets {
		next[t.Name] = true
		o, known := old[t.Name]
		switch {
		case !known:
			s.status[t.Name] = initial(t)
			s.tried[t.Name] = make(chan struct{})
			s.gone = slices.DeleteFunc(s.gone, func(g Status) bool { return g.Name == t.Name })
		case o != t:
			st := s.status[t.Name]
			st.URL, st.Source, st.Role, st.Model = redact.URL(t.URL), t.Source, t.Role, t.Model
			s.status[t.Name] = st
		}
	}
	var departed []string
	for _, t := range s.targets {
		if next[t.Name] {
			continue
		}
		departed = append(departed, t.Name)
		st := s.status[t.Name]
		st.Gone, st.Up, st.Error, st.GoneSince = true, false, "", &now
		s.gone = append(s.gone, st)
		delete(s.status, t.Name)
		if ch := s.tried[t.Name]; ch != nil {
			close(ch) // nobody waits for a first scrape that will not come
		}
		delete(s.tried, t.Name)
		delete(s.versions, t.Name)
	}
	s.targets = slices.Clone(targets)
	s.pruneGone(now)
	s.mu.Unlock()
	for _, name := range departed {
		// An empty scrape ends every series the last one held, as Prometheus does when a target disappears.
		s.rec.Append(name, now.UnixMilli(), nil)
	}
}

// pruneGone drops departed statuses older than GoneFor, and the oldest beyond MaxGone; s.mu is held.
func (s *Scraper) pruneGone(now time.Time) {
	if s.opts.GoneFor > 0 {
		s.gone = slices.DeleteFunc(s.gone, func(g Status) bool { return now.Sub(*g.GoneSince) > s.opts.GoneFor })
	}
	if n := len(s.gone) - MaxGone; n > 0 {
		s.gone = slices.Delete(s.gone, 0, n)
	}
}

// Targets are the targets scraped now.
func (s *Scraper) Targets() []Target {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.targets)
}

// Start scrapes all targets now and then every Interval, in the background.
func (s *Scraper) Start() {
	go func() {
		defer close(s.done)
		tick := time.NewTicker(s.opts.Interval)
		defer tick.Stop()
		for {
			s.ScrapeAll(context.Background())
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
}

// Stop ends scraping and waits for the scrape in flight, so a disposed instance leaves nothing running.
func (s *Scraper) Stop() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	s.bgCancel()
	s.asking.Wait()
}

// ScrapeAll scrapes every target once, concurrently, records the results and notifies subscribers.
// A round begun after the call and finished while it waited serves it: its results are as fresh, and a caller
// that waited behind the background loop would otherwise wait for one round after another.
func (s *Scraper) ScrapeAll(ctx context.Context) {
	before := s.started.Load()
	s.lockRound()
	defer s.round.Unlock()
	if s.started.Load() > before {
		return
	}
	s.started.Add(1)
	s.mu.RLock()
	targets := s.targets
	s.mu.RUnlock()
	s.scrape(ctx, targets)
}

// Settle tells the recorder that nothing more will be appended at or before the millisecond before now, or, while
// a round is in flight, before the round began: every Append runs in a round (or SetTargets) under s.round and is
// stamped at or after the round took it, so one that begins after this has a later time. A refresh's newest step
// then reads as final as soon as its time has passed, not only once every endpoint's next scrape has come in:
// without it, a refresh between a step boundary and the next round evaluates that step, and the one after
// evaluates it again.
func (s *Scraper) Settle() {
	if !s.round.TryLock() {
		// The holder may not have stamped roundFrom yet: the previous round's start is earlier still, so as true.
		s.rec.AdvanceWatermark(s.roundFrom.Load() - 1)
		return
	}
	defer s.round.Unlock()
	s.rec.AdvanceWatermark(time.Now().UnixMilli() - 1)
}

// detect is vllm.Detect; tests count its calls.
var detect = vllm.Detect

// lastDetection is the detection of the endpoint's last scrape, nil when it failed or there was none.
func (s *Scraper) lastDetection(name string) *vllm.Detection {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.status[name].Detection
}

// lockRound takes s.round and notes when (roundFrom).
func (s *Scraper) lockRound() {
	s.round.Lock()
	s.roundFrom.Store(time.Now().UnixMilli())
}

// ScrapePending scrapes now the targets never scraped yet (new from discovery), so that they need not wait for the
// next round; the others keep their rhythm.
func (s *Scraper) ScrapePending(ctx context.Context) {
	s.lockRound()
	defer s.round.Unlock()
	var pending []Target
	s.mu.RLock()
	for _, t := range s.targets {
		if s.tried[t.Name] != nil {
			pending = append(pending, t)
		}
	}
	s.mu.RUnlock()
	if len(pending) > 0 {
		s.scrape(ctx, pending)
	}
}

// scrape scrapes targets concurrently, records the results and notifies subscribers; s.round is held.
func (s *Scraper) scrape(ctx context.Context, targets []Target) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	sem := make(chan struct{}, s.opts.Concurrency)
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func(t Target) {
			defer func() { <-sem; wg.Done() }()
			s.scrapeOne(ctx, t)
		}(t)
	}
	wg.Wait()
	s.notify(time.Now().UnixMilli())
}

func (s *Scraper) scrapeOne(ctx context.Context, t Target) {
	start := time.Now()
	res, err := exposition.Fetch(ctx, s.opts.Client, t.URL, exposition.ScrapeOptions{
		MaxBodyBytes: s.opts.MaxBodyBytes,
		Timeout:      s.opts.Timeout,
		// Families no query reads (Python runtime, process, HTTP server metrics) are most of a payload's lines and
		// would otherwise fill history. le and quantile values are stored as Prometheus 3 stores them ("1" → "1.0"),
		// so raw bucket series and le matchers are the same in both modes.
		Parse: exposition.ParseOptions{Keep: vllm.ReadsFamily, MaxSamples: s.opts.MaxSamples, NormalizeFloatLabels: true},
		Scrub: s.opts.Scrub,
	})
	st := Status{Name: t.Name, URL: redact.URL(t.URL), LastTry: start, Source: t.Source, Role: t.Role, Model: t.Model}
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return // shutting down: not the endpoint's fault
		}
		st.Error = err.Error()
		if errors.Is(err, exposition.ErrSampleLimit) {
			st.Error += " (kept vLLM, Ascend and Dynamo series; raise maxSamples in the data source settings or drop labels at the source)"
		}
		st.Duration = time.Since(start)
		// Like Prometheus: up drops to 0 and every other series of the endpoint gets a staleness marker.
		s.rec.Append(t.Name, start.UnixMilli(), upScrape(0, nil))
	} else {
		st.Up = true
		st.Duration, st.BodyBytes, st.Samples = res.Duration, res.BodyBytes, res.Scrape.NumSamples()
		// Samples are stamped with the time the request was sent, as Prometheus does.
		same := s.rec.Append(t.Name, res.Start.UnixMilli(), upScrape(1, res.Scrape))
		// The flavor and ranks are told from the series' names and labels alone: a scrape with the previous one's
		// series keeps its detection (at 256 endpoints, detecting again was a tenth of scraping's CPU). The up
		// sample upScrape added carries no name or label that detection reads.
		if same {
			st.Detection = s.lastDetection(t.Name)
		}
		if st.Detection == nil {
			d := detect(vllm.ScrapeExposed{Scrape: res.Scrape})
			st.Detection = &d
		}
		res.Scrape.Release() // the next scrape's parse reuses its arrays
		s.askVersion(t, st.Detection.Flavor)
	}
	s.mu.Lock()
	s.status[t.Name] = st
	if ch := s.tried[t.Name]; ch != nil {
		close(ch)
		s.tried[t.Name] = nil
	}
	s.mu.Unlock()
}

// WaitFirstScrape waits until every target whose name matches has finished its first scrape, or ctx ends; the
// caller bounds ctx (a scrape ends within Timeout).
func (s *Scraper) WaitFirstScrape(ctx context.Context, match func(name string) bool) {
	var pending []chan struct{}
	s.mu.RLock()
	for name, ch := range s.tried {
		if ch != nil && match(name) {
			pending = append(pending, ch)
		}
	}
	s.mu.RUnlock()
	for _, ch := range pending {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// upScrape adds the up sample (vllm.Up) to a scrape (or makes a scrape of only up for a failure).
func upScrape(v float64, sc *exposition.Scrape) *exposition.Scrape {
	if sc == nil {
		sc = &exposition.Scrape{}
	}
	sc.Add(exposition.Family{Name: vllm.Up, Type: exposition.TypeGauge, Samples: []exposition.Sample{{Name: vllm.Up, Value: v}}})
	return sc
}

// Statuses returns every target's latest status, in target order, then the departed targets', oldest departure
// first.
func (s *Scraper) Statuses() []Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Status, 0, len(s.targets)+len(s.gone))
	for _, t := range s.targets {
		st := s.status[t.Name]
		if v := s.versions[t.Name]; v != nil && st.Up {
			st.Version = v.value
		}
		out = append(out, st)
	}
	return append(out, s.gone...)
}

// Down returns, in target order, the statuses of the targets whose last scrape failed or that no scrape reached
// yet: every query reads them for its notices, and a healthy fleet has none, so the others are not copied.
func (s *Scraper) Down() []Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Status
	for _, t := range s.targets {
		if st := s.status[t.Name]; !st.Up {
			out = append(out, st)
		}
	}
	return out
}

// Subscribe returns a channel that receives the time of every completed scrape round, and a function that
// unsubscribes. Slow receivers miss rounds rather than stall scraping.
func (s *Scraper) Subscribe() (<-chan int64, func()) {
	ch := make(chan int64, 1)
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}
}

func (s *Scraper) notify(t int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for ch := range s.subs {
		select {
		case ch <- t:
		default:
		}
	}
}
