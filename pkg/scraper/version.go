package scraper

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// VersionInterval is how often an endpoint's vLLM release is asked again: it changes only with a restart.
const VersionInterval = 10 * time.Minute

// maxVersionBytes bounds /version's answer, {"version": "0.11.0"}.
const maxVersionBytes = 4 << 10

// versionURL is vLLM's /version beside the endpoint's /metrics (same origin and path prefix), or "" when the
// endpoint's path does not end in /metrics.
func versionURL(metricsURL string) string {
	u, err := url.Parse(metricsURL)
	if err != nil {
		return ""
	}
	prefix, ok := strings.CutSuffix(u.Path, "/metrics")
	if !ok {
		return ""
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = prefix+"/version", "", "", ""
	return u.String()
}

// versionInfo is what is known of one endpoint's release.
type versionInfo struct {
	value string
	at    time.Time // when it was last asked
	busy  bool      // a request is in flight
}

// askVersion asks the endpoint's /version in the background when it is due: a vLLM flavor, not asked within
// VersionInterval, no request in flight.
func (s *Scraper) askVersion(t Target, f vllm.Flavor) {
	if !asksVersion(f) {
		return
	}
	s.mu.Lock()
	v := s.versions[t.Name]
	if v == nil {
		v = &versionInfo{}
		s.versions[t.Name] = v
	}
	if v.busy || (!v.at.IsZero() && time.Since(v.at) < VersionInterval) {
		s.mu.Unlock()
		return
	}
	v.busy, v.at = true, time.Now()
	s.mu.Unlock()
	s.asking.Add(1)
	go func() {
		defer s.asking.Done()
		got := fetchVersion(s.bg, s.opts.Client, t.URL, s.opts.Timeout)
		s.mu.Lock()
		v.value, v.busy = got, false
		s.mu.Unlock()
	}()
}

// WaitVersions waits until no /version request is in flight, or ctx ends: a health check shows the releases its own
// scrape round asked for.
func (s *Scraper) WaitVersions(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.asking.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// asksVersion reports whether a flavor's server answers /version: vLLM's API server does; Dynamo's ports do not.
func asksVersion(f vllm.Flavor) bool {
	return f == vllm.FlavorV1 || f == vllm.FlavorV0 || f == vllm.FlavorAscend
}

// fetchVersion asks vLLM's /version with the scrape's client (its credentials, egress policy and no redirects),
// bounded in time and size; "" when the server does not say.
func fetchVersion(ctx context.Context, client *http.Client, metricsURL string, timeout time.Duration) string {
	u := versionURL(metricsURL)
	if u == "" {
		return ""
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return ""
	}
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return ""
	}
	var v struct {
		Version string `json:"version"`
	}
	if json.NewDecoder(io.LimitReader(res.Body, maxVersionBytes)).Decode(&v) != nil {
		return ""
	}
	return vllm.CleanVersion(v.Version)
}
