package datasource

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
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
			return fmt.Errorf("%q is not a duration such as 5s or 1h", s)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("%s is not a duration such as \"5s\" or a number of seconds", b)
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
	// MaxMemoryMB caps direct mode's in-memory history; the oldest data goes first.
	MaxMemoryMB int64 `json:"maxMemoryMB,omitempty"`
	// MaxBodyMB and MaxSamples bound one scrape of one endpoint.
	MaxBodyMB  int64 `json:"maxBodyMB,omitempty"`
	MaxSamples int   `json:"maxSamples,omitempty"`

	// HTTPMethod is how Prometheus mode sends queries: POST (default, fits long expressions) or GET.
	HTTPMethod string `json:"httpMethod,omitempty"`
	// OAuthPassThru forwards the signed-in user's OAuth identity to the Prometheus server.
	OAuthPassThru bool `json:"oauthPassThru,omitempty"`

	// BearerToken comes from secureJsonData and is sent as Authorization: Bearer; never logged or returned.
	BearerToken string `json:"-"`
}

// SecureBearerToken is the secureJsonData key of the bearer token.
const SecureBearerToken = "bearerToken"

// Defaults for direct mode, matching how operators usually scrape vLLM.
const (
	DefaultScrapeInterval = 5 * time.Second
	DefaultRetention      = time.Hour
	DefaultMaxMemoryMB    = 512
)

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
		// A scrape must finish before the next one starts, or slow endpoints pile up requests.
		st.ScrapeTimeout = Duration(time.Duration(st.ScrapeInterval) * 4 / 5)
	}
	if st.Retention == 0 {
		st.Retention = Duration(DefaultRetention)
	}
	return st, st.validate()
}

func (st Settings) validate() error {
	var errs []error
	switch st.Mode {
	case ModeDirect:
		if len(st.Endpoints) == 0 {
			errs = append(errs, errors.New("direct mode needs at least one /metrics endpoint URL"))
		}
		seen := map[string]bool{}
		for i, e := range st.Endpoints {
			switch err := checkHTTPURL(e.URL); {
			case err != nil:
				errs = append(errs, fmt.Errorf("endpoint %d: %w", i+1, err))
			case seen[e.URL]:
				errs = append(errs, fmt.Errorf("endpoint %d: %s is listed twice", i+1, redactURL(e.URL)))
			}
			seen[e.URL] = true
		}
	case ModePrometheus:
		if m := strings.ToUpper(st.HTTPMethod); m != "" && m != "GET" && m != "POST" {
			errs = append(errs, fmt.Errorf("httpMethod %q is unknown: use GET or POST", st.HTTPMethod))
		}
	default:
		errs = append(errs, fmt.Errorf("mode %q is unknown: use %q or %q", st.Mode, ModeDirect, ModePrometheus))
	}
	if st.ScrapeInterval < Duration(time.Second) {
		errs = append(errs, fmt.Errorf("scrape interval %s is below the 1s minimum", time.Duration(st.ScrapeInterval)))
	}
	if st.ScrapeTimeout > st.ScrapeInterval {
		errs = append(errs, fmt.Errorf("scrape timeout %s is longer than the scrape interval %s",
			time.Duration(st.ScrapeTimeout), time.Duration(st.ScrapeInterval)))
	}
	if st.MaxMemoryMB < 16 {
		errs = append(errs, fmt.Errorf("maxMemoryMB %d is below the 16 MB minimum", st.MaxMemoryMB))
	}
	if st.MaxBodyMB < 0 || st.MaxSamples < 0 {
		errs = append(errs, errors.New("maxBodyMB and maxSamples must not be negative"))
	}
	if st.Retention < st.ScrapeInterval {
		errs = append(errs, fmt.Errorf("retention %s is shorter than one scrape interval", time.Duration(st.Retention)))
	}
	return errors.Join(errs...)
}

// checkHTTPURL accepts only absolute http(s) URLs with a host; the error quotes the URL without credentials.
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%q is not an http(s) URL", redactURL(raw))
	}
	return nil
}

// redactURL drops user:password from a URL so it can appear in messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
