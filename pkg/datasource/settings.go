package datasource

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/egress"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// Mode selects where the data source reads metrics from.
type Mode string

const (
	// ModeDirect scrapes vLLM /metrics endpoints itself and keeps history in memory.
	ModeDirect Mode = "direct"
	// ModePrometheus sends PromQL to a Prometheus-compatible server.
	ModePrometheus Mode = "prometheus"
)

// Endpoint is one vLLM, vLLM-Ascend or Dynamo /metrics URL.
type Endpoint struct {
	URL  string `json:"url"`
	Name string `json:"name,omitempty"`
}

// DisplayName is the endpoint's name, or its host:port when it has none.
func (e Endpoint) DisplayName() string {
	if e.Name != "" {
		return e.Name
	}
	if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
		return u.Host
	}
	return e.URL
}

// Duration is a time.Duration that reads Grafana-style strings such as "5s" or "1h" from JSON.
type Duration time.Duration

// UnmarshalJSON accepts a Go duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%.64q is not a duration such as 5s or 1h", s)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("%.64s is not a duration such as \"5s\" or a number of seconds", b)
	}
	if math.IsNaN(secs) || math.Abs(secs) > float64(math.MaxInt64/int64(time.Second)) {
		return fmt.Errorf("%g seconds is out of range", secs)
	}
	*d = Duration(time.Duration(secs * float64(time.Second)))
	return nil
}

// MarshalJSON writes the duration as a string such as "5s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Settings is the data source's jsonData, with defaults applied.
type Settings struct {
	Mode           Mode       `json:"mode"`
	Endpoints      []Endpoint `json:"endpoints"`
	ScrapeInterval Duration   `json:"scrapeInterval"`
	ScrapeTimeout  Duration   `json:"scrapeTimeout"`
	Retention      Duration   `json:"retention"`
	// MaxMemoryMB caps direct mode's in-memory history and results cache (CacheShare of it); the oldest data goes
	// first.
	MaxMemoryMB int64 `json:"maxMemoryMB,omitempty"`
	// MaxBodyMB and MaxSamples bound one scrape of one endpoint.
	MaxBodyMB  int64 `json:"maxBodyMB,omitempty"`
	MaxSamples int   `json:"maxSamples,omitempty"`

	// HTTPMethod is how Prometheus mode sends queries: POST (default, fits long expressions) or GET.
	HTTPMethod string `json:"httpMethod,omitempty"`
	// DenyPartialResponse makes Prometheus mode ask for an error rather than an answer without a store that failed
	// (Thanos's partial_response=false, VictoriaMetrics cluster's deny_partial_response=1); off, such answers come
	// with a notice naming the store.
	DenyPartialResponse bool `json:"denyPartialResponse,omitempty"`
	// OAuthPassThru forwards the signed-in user's OAuth identity to the Prometheus server.
	OAuthPassThru bool `json:"oauthPassThru,omitempty"`
	// IncrementalQuerying keeps, in Prometheus mode, the steps of range queries older than
	// IncrementalQueryOverlapWindow between refreshes and asks the server only for the newer ones (promapi.Results;
	// the names are those of Grafana's Prometheus data source). Unset is on; it is off whatever it says with
	// OAuthPassThru, whose answers depend on the user.
	IncrementalQuerying           *bool    `json:"incrementalQuerying,omitempty"`
	IncrementalQueryOverlapWindow Duration `json:"incrementalQueryOverlapWindow,omitempty"`
	// AllowLinkLocalTargets lets endpoints, probes and the Prometheus URL reach link-local and cloud-metadata
	// addresses (refused by default: see pkg/egress).
	AllowLinkLocalTargets bool `json:"allowLinkLocalTargets,omitempty"`

	// Accelerator names the GPU or NPU preset (measure.Accelerators) whose peaks MFU queries divide by;
	// PeakTFLOPS and PeakMemoryTBps, when above 0, replace the preset's for accelerators not listed.
	Accelerator    string  `json:"accelerator,omitempty"`
	PeakTFLOPS     float64 `json:"peakTflops,omitempty"`
	PeakMemoryTBps float64 `json:"peakMemoryTBps,omitempty"`

	// Discovery lists the sources (DNS, Kubernetes, http_sd, file_sd) whose targets direct mode scrapes beside
	// Endpoints; DiscoveryInterval is how often every source is asked again.
	Discovery         []discovery.Source `json:"discovery,omitempty"`
	DiscoveryInterval Duration           `json:"discoveryInterval,omitempty"`
	// RoleLabel is, in Prometheus mode, the label the server's relabel rules put an endpoint's prefill/decode role in
	// (e.g. role, from the pod label llm-d.ai/role); role detection uses it where series have it.
	RoleLabel string `json:"roleLabel,omitempty"`

	// BearerToken comes from secureJsonData and is sent as Authorization: Bearer; never logged or returned.
	BearerToken string `json:"-"`
}

// SecureBearerToken is the secureJsonData key of the bearer token.
const SecureBearerToken = "bearerToken"

// Defaults for direct mode, matching how operators usually scrape vLLM.
const (
	DefaultScrapeInterval = query.DefaultScrapeInterval
	DefaultRetention      = time.Hour
	DefaultMaxMemoryMB    = 512
)

// DefaultOverlapWindow is how recent a step Prometheus mode asks the server again at every refresh: ten minutes,
// as Grafana's incremental querying and Mimir's query frontend (max_cache_freshness) default to, well beyond a
// sample's way to the server through remote write or a Thanos sidecar.
const DefaultOverlapWindow = 10 * time.Minute

// Ranges the settings must lie in. Each bound keeps the arithmetic on it (MB << 20, durations) far from overflow
// and the work it allows finite; the config editor checks the same numbers, generated into src/datasource/settings.gen.ts.
const (
	MinMemoryMB       = 16
	MaxMemoryMB       = 64 << 10 // 64 GiB of history per data source
	MaxBodyMB         = 1 << 10  // one scrape's body
	MaxSamples        = 10_000_000
	MinScrapeInterval = time.Second
	MaxScrapeInterval = time.Hour
	MaxRetention      = 31 * 24 * time.Hour
	MaxEndpoints      = 1000
	MaxURLBytes       = 8 << 10
	MaxNameBytes      = 256
	// MinOverlapWindow is above VictoriaMetrics' default -search.latencyOffset (30 s), whose newest steps come empty.
	MinOverlapWindow = time.Minute
	MaxOverlapWindow = 24 * time.Hour
)

// MaxMemoryBytes is direct mode's memory cap in bytes (validated, so the shift cannot overflow).
func (st Settings) MaxMemoryBytes() int64 { return st.MaxMemoryMB << 20 }

// CacheShare is the part of MaxMemoryMB the results cache may count; the history has the rest. A dashboard's answers
// are small next to the history they are computed from (the fleet overview at 256 endpoints: a few MB).
const CacheShare = 8

// RetentionMargin is history kept beyond the retention, so that a range as long as the retention still reads whole
// rate windows at its start (the fleet overview's longest is 15 minutes; gauges' lookback is 5), with a minute for the
// range's alignment to its step and the scrape interval: its first steps answer as Prometheus's do, and the results
// cache keeps them instead of evaluating them again at every refresh as older scrapes are dropped
// (TestRetentionMarginCoversFleetWindows).
const RetentionMargin = 16 * time.Minute

// HistoryRetention is how far back direct mode's history reaches.
func (st Settings) HistoryRetention() time.Duration {
	return time.Duration(st.Retention) + RetentionMargin
}

// CacheBytes is the results cache's memory budget.
func (st Settings) CacheBytes() int64 { return st.MaxMemoryBytes() / CacheShare }

// PrometheusCacheShare is the part of MaxMemoryMB Prometheus mode's results cache may count: there is no history in
// that mode, and the other half is left to the answers being decoded.
const PrometheusCacheShare = 2

// PrometheusCacheBytes is Prometheus mode's results cache budget; 0 when incremental querying is off.
func (st Settings) PrometheusCacheBytes() int64 {
	if st.IncrementalQuerying != nil && !*st.IncrementalQuerying || st.OAuthPassThru {
		return 0
	}
	return st.MaxMemoryBytes() / PrometheusCacheShare
}

// HistoryBytes is the history's memory cap.
func (st Settings) HistoryBytes() int64 { return st.MaxMemoryBytes() - st.CacheBytes() }

// MaxBodyBytes is one scrape's body cap in bytes; 0 leaves the scraper's default.
func (st Settings) MaxBodyBytes() int64 { return st.MaxBodyMB << 20 }

// defaultTimeout is the scrape timeout of an interval: a scrape must finish before the next one starts, or slow
// endpoints pile up requests.
func defaultTimeout(interval time.Duration) time.Duration { return interval * 4 / 5 }

// LoadSettings parses and validates the instance settings Grafana passes with every request.
func LoadSettings(s backend.DataSourceInstanceSettings) (Settings, error) {
	var st Settings
	if len(s.JSONData) > 0 {
		if err := json.Unmarshal(s.JSONData, &st); err != nil {
			return Settings{}, fmt.Errorf("data source settings (jsonData) are invalid: %w", err)
		}
	}
	if st.Mode == "" {
		st.Mode = ModeDirect
	}
	st.BearerToken = s.DecryptedSecureJSONData[SecureBearerToken]
	if st.MaxMemoryMB == 0 {
		st.MaxMemoryMB = DefaultMaxMemoryMB
	}
	if st.ScrapeInterval == 0 {
		st.ScrapeInterval = Duration(DefaultScrapeInterval)
	}
	if st.ScrapeTimeout == 0 {
		st.ScrapeTimeout = Duration(defaultTimeout(time.Duration(st.ScrapeInterval)))
	}
	if st.Retention == 0 {
		st.Retention = Duration(DefaultRetention)
	}
	if st.DiscoveryInterval == 0 {
		st.DiscoveryInterval = Duration(discovery.DefaultInterval)
	}
	if st.IncrementalQueryOverlapWindow == 0 {
		st.IncrementalQueryOverlapWindow = Duration(DefaultOverlapWindow)
	}
	return st, st.validate()
}

func (st Settings) validate() error {
	var errs []error
	switch st.Mode {
	case ModeDirect:
		if len(st.Endpoints) == 0 && len(st.Discovery) == 0 {
			errs = append(errs, errors.New("direct mode needs at least one /metrics endpoint URL or discovery source"))
		}
		errs = append(errs, checkEndpoints(st.Endpoints, st.egress(false))...)
		errs = append(errs, st.checkDiscovery()...)
	case ModePrometheus:
		if m := strings.ToUpper(st.HTTPMethod); m != "" && m != "GET" && m != "POST" {
			errs = append(errs, fmt.Errorf("httpMethod %q is unknown: use GET or POST", st.HTTPMethod))
		}
		if w := time.Duration(st.IncrementalQueryOverlapWindow); w < MinOverlapWindow || w > MaxOverlapWindow {
			errs = append(errs, fmt.Errorf("incrementalQueryOverlapWindow %s is outside %s–%s", w, short(MinOverlapWindow), short(MaxOverlapWindow)))
		}
		if st.RoleLabel != "" && !promLabelName.MatchString(st.RoleLabel) {
			errs = append(errs, fmt.Errorf("roleLabel %.64q is not a Prometheus label name (letters, digits, _)", st.RoleLabel))
		}
	default:
		errs = append(errs, fmt.Errorf("mode %q is unknown: use %q or %q", st.Mode, ModeDirect, ModePrometheus))
	}
	if st.ScrapeInterval < Duration(MinScrapeInterval) {
		errs = append(errs, fmt.Errorf("scrape interval %s is below the %s minimum", time.Duration(st.ScrapeInterval), MinScrapeInterval))
	}
	if st.ScrapeInterval > Duration(MaxScrapeInterval) {
		errs = append(errs, fmt.Errorf("scrape interval %s is above the %s maximum", time.Duration(st.ScrapeInterval), MaxScrapeInterval))
	}
	if st.Retention > Duration(MaxRetention) {
		errs = append(errs, fmt.Errorf("retention %s is above the %s maximum", time.Duration(st.Retention), MaxRetention))
	}
	if st.ScrapeTimeout > st.ScrapeInterval {
		errs = append(errs, fmt.Errorf("scrape timeout %s is longer than the scrape interval %s",
			time.Duration(st.ScrapeTimeout), time.Duration(st.ScrapeInterval)))
	}
	errs = append(errs, checkRange("maxMemoryMB", st.MaxMemoryMB, MinMemoryMB, MaxMemoryMB, " MB"),
		checkRange("maxBodyMB", st.MaxBodyMB, 0, MaxBodyMB, " MB"),
		checkRange("maxSamples", int64(st.MaxSamples), 0, MaxSamples, ""))
	if _, ok := measure.AcceleratorByID(st.Accelerator); st.Accelerator != "" && !ok {
		errs = append(errs, fmt.Errorf("accelerator %q is not a known preset; set peakTflops and peakMemoryTBps instead", query.Truncate(st.Accelerator, 64)))
	}
	for name, v := range map[string]float64{"peakTflops": st.PeakTFLOPS, "peakMemoryTBps": st.PeakMemoryTBps} {
		// 0 means the preset's peak; anything else must be a realistic peak.
		if v != 0 && (!(v >= query.MinPeak) || v > query.MaxPeak) {
			errs = append(errs, fmt.Errorf("%s %v is outside %v–%v (0 uses the accelerator preset)", name, v, query.MinPeak, query.MaxPeak))
		}
	}
	if st.Retention < st.ScrapeInterval {
		errs = append(errs, fmt.Errorf("retention %s is shorter than one scrape interval", time.Duration(st.Retention)))
	}
	return errors.Join(errs...)
}

// Peaks are the accelerator peaks MFU queries divide by: the custom ones where set, else the preset's (the default
// preset when none is named).
func (st Settings) Peaks() (tflops, tbps float64) {
	id := st.Accelerator
	if id == "" {
		id = measure.DefaultAccelerator
	}
	a, _ := measure.AcceleratorByID(id)
	tflops, tbps = a.TFLOPS, a.TBps
	if st.PeakTFLOPS > 0 {
		tflops = st.PeakTFLOPS
	}
	if st.PeakMemoryTBps > 0 {
		tbps = st.PeakMemoryTBps
	}
	return tflops, tbps
}

// checkRange reports a number outside [lo, hi]; unit follows the bound in the message.
func checkRange(field string, v, lo, hi int64, unit string) error {
	switch {
	case v < 0 && lo == 0:
		return fmt.Errorf("%s %d is negative", field, v)
	case v < lo:
		return fmt.Errorf("%s %d is below the %d%s minimum", field, v, lo, unit)
	case v > hi:
		return fmt.Errorf("%s %d is above the %d%s maximum", field, v, hi, unit)
	}
	return nil
}

// checkEndpoints refuses endpoint lists that would make two endpoints one: status and history are keyed by display
// name, so a shared name, the same target under two names, or a name that is another endpoint's host:port (the
// display name an unnamed endpoint gets) would mix or hide one endpoint's series.
func checkEndpoints(eps []Endpoint, policy egress.Policy) []error {
	if len(eps) > MaxEndpoints {
		return []error{fmt.Errorf("%d endpoints: at most %d endpoints per data source", len(eps), MaxEndpoints)}
	}
	var errs []error
	names, targets, hosts := map[string]int{}, map[string]int{}, map[string]int{}
	for i, e := range eps {
		if u, err := url.Parse(e.URL); err == nil && u.Host != "" {
			if _, dup := hosts[u.Host]; !dup {
				hosts[u.Host] = i
			}
		}
	}
	for i, e := range eps {
		n := i + 1
		if len(e.URL) > MaxURLBytes || len(e.Name) > MaxNameBytes {
			errs = append(errs, fmt.Errorf("endpoint %d: URLs are at most %d bytes and names at most %d bytes", n, MaxURLBytes, MaxNameBytes))
			continue
		}
		if err := checkHTTPURL(e.URL); err != nil {
			errs = append(errs, fmt.Errorf("endpoint %d: %w", n, err))
			continue
		}
		if err := policy.CheckURL(e.URL); err != nil {
			errs = append(errs, fmt.Errorf("endpoint %d: %w", n, err))
			continue
		}
		key := targetKey(e.URL)
		if j, dup := targets[key]; dup {
			if eps[j].URL == e.URL {
				errs = append(errs, fmt.Errorf("endpoint %d: %s is listed twice", n, redact.URL(e.URL)))
			} else {
				errs = append(errs, fmt.Errorf("endpoint %d: %s is endpoint %d's target too; list each target once", n, redact.URL(e.URL), j+1))
			}
			continue
		}
		targets[key] = i
		name := e.DisplayName()
		if j, dup := names[name]; dup {
			errs = append(errs, fmt.Errorf("endpoint %d: the name %q is also endpoint %d's; give each endpoint its own name", n, name, j+1))
			continue
		}
		names[name] = i
		if j, ok := hosts[e.Name]; ok && e.Name != "" && j != i && eps[j].Name != "" {
			errs = append(errs, fmt.Errorf("endpoint %d: the name %q is endpoint %d's host:port; choose another name", n, e.Name, j+1))
		}
	}
	return errs
}

// checkDiscovery checks the discovery sources and their interval; an http_sd URL must pass the egress rules.
func (st Settings) checkDiscovery() []error {
	if len(st.Discovery) == 0 {
		return nil
	}
	var errs []error
	if len(st.Discovery) > discovery.MaxSources {
		return []error{fmt.Errorf("%d discovery sources: at most %d", len(st.Discovery), discovery.MaxSources)}
	}
	if iv := time.Duration(st.DiscoveryInterval); iv < discovery.MinInterval || iv > discovery.MaxInterval {
		errs = append(errs, fmt.Errorf("discovery interval %s is outside %s–%s", iv, discovery.MinInterval, short(discovery.MaxInterval)))
	}
	for i, src := range st.Discovery {
		err := src.Validate()
		if err == nil && src.Type == discovery.TypeHTTP {
			err = st.egress(true).CheckURL(src.URL)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("discovery source %d (%s): %w", i+1, src.DisplayName(i+1), err))
		}
	}
	return errs
}

// short is a duration as a user writes it: 1h, not 1h0m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// targetKey identifies what an endpoint scrapes: host and port (the scheme's default made explicit, case folded)
// and path without a trailing slash. Query strings do not make another target.
func targetKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	return strings.ToLower(u.Hostname()) + ":" + port + p
}

// checkHTTPURL accepts only absolute http(s) URLs with a host; the error quotes the URL without credentials.
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%q is not an http(s) URL", redact.URL(raw))
	}
	return nil
}

// hasEndpoint says whether raw is one of the saved endpoints' URLs, exactly as saved.
func (st Settings) hasEndpoint(raw string) bool {
	for _, e := range st.Endpoints {
		if e.URL == raw {
			return true
		}
	}
	return false
}

// egress is the data source's connection policy: scrapes follow no redirects, API calls only same-origin ones.
func (st Settings) egress(followRedirects bool) egress.Policy {
	return egress.Policy{AllowLinkLocal: st.AllowLinkLocalTargets, FollowRedirects: followRedirects}
}
