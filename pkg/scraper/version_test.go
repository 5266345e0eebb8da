package scraper

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestVersionURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://vllm:8000/metrics":              "http://vllm:8000/version",
		"https://gw.example/team-a/metrics?x=1": "https://gw.example/team-a/version",
		"http://vllm:8000/metrics/":             "",
		"http://vllm:8000/stats":                "",
		"::":                                    "",
	} {
		if got := versionURL(in); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// TestVersionIsAskedBesideTheScrape checks that a vLLM endpoint's release is read from /version once per
// VersionInterval with the scrape's credentials, that Dynamo's ports are not asked, and that a hostile answer gives
// no version.
func TestVersionIsAskedBesideTheScrape(t *testing.T) {
	var asked atomic.Int32
	answer := `{"version":"0.11.0rc2+cu124"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			_, _ = w.Write([]byte("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 3\n"))
		case "/version":
			asked.Add(1)
			if r.Header.Get("Authorization") != "Bearer t0ken" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			_, _ = w.Write([]byte(answer))
		}
	}))
	defer srv.Close()
	dynamo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			asked.Add(100)
		}
		_, _ = w.Write([]byte("# TYPE dynamo_component_uptime_seconds gauge\ndynamo_component_uptime_seconds 3\n"))
	}))
	defer dynamo.Close()
	client := &http.Client{Transport: bearer{"t0ken"}}
	s := New([]Target{{Name: "v1", URL: srv.URL + "/metrics"}, {Name: "dynamo", URL: dynamo.URL + "/metrics"}}, &recorder{},
		Options{Interval: time.Second, Timeout: time.Second, Client: client})
	s.ScrapeAll(t.Context())
	versions := map[string]string{}
	// The release is asked in the background, so a slow /version never delays a scrape; wait for it, boundedly.
	for deadline := time.Now().Add(10 * time.Second); versions["v1"] == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, st := range s.Statuses() {
			versions[st.Name] = st.Version
		}
	}
	s.ScrapeAll(t.Context())
	s.asking.Wait() // nothing left asking
	if versions["v1"] != "0.11.0rc2+cu124" || versions["dynamo"] != "" {
		t.Fatalf("versions %v", versions)
	}
	if asked.Load() != 1 {
		t.Errorf("/version asked %d times in two scrapes within %s, want once (and never on Dynamo)", asked.Load(), VersionInterval)
	}
	for _, bad := range []string{`{"version":"<script>"}`, `{"version":"` + strings.Repeat("9", 65) + `"}`, `not json`,
		`{"version":"0.1` + strings.Repeat(" ", maxVersionBytes) + `"}`} {
		answer = bad
		if v := fetchVersion(t.Context(), client, srv.URL+"/metrics", time.Second); v != "" {
			t.Errorf("%.40q gave version %q", bad, v)
		}
	}
}

// bearer adds a token as the data source's client does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
