package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// Secrets of the hostile-server tests: each must never appear in anything the plugin answers or logs.
const (
	bearerSecret = "bearer-6a1f0c9d2e"
	basicUser    = "scraper"
	basicSecret  = "basic-pw-77e1b2"
	headerSecret = "tenant-9c4d3b2a"
	querySecret  = "query-tok-51f0e8"
)

func secretForms() []string {
	return []string{bearerSecret, basicSecret, headerSecret, querySecret,
		base64.StdEncoding.EncodeToString([]byte(basicUser + ":" + basicSecret))}
}

func assertNoSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range secretForms() {
		if strings.Contains(text, s) {
			t.Errorf("%s holds a secret (%s…): %.300s", where, s[:6], text)
		}
	}
}

// echoServer answers every request with status and a body that repeats the request line and every header, as a
// misconfigured proxy or debugging server does.
func echoServer(t *testing.T, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		// Credentials first, so that they fall inside the part of the answer an error message quotes.
		first := map[string]int{"Authorization": 0, "X-Scope-Orgid": 1}
		sort.Slice(keys, func(i, j int) bool {
			fi, iok := first[keys[i]]
			fj, jok := first[keys[j]]
			if iok != jok {
				return iok
			}
			if iok {
				return fi < fj
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(r.Header[k], ","))
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// recorder counts the requests a server receives and keeps their headers.
type recorder struct {
	mu      sync.Mutex
	headers []http.Header
}

func (rec *recorder) server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.headers = append(rec.headers, r.Header.Clone())
		rec.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (rec *recorder) seen() []http.Header {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]http.Header(nil), rec.headers...)
}

func credentialed(uid, url string, jsonData map[string]any) harness.DataSource {
	jsonData["httpHeaderName1"] = "X-Scope-OrgID"
	return harness.DataSource{UID: uid, URL: url, JSONData: jsonData, BasicAuthUser: basicUser,
		Secure: map[string]string{"bearerToken": bearerSecret, "basicAuthPassword": basicSecret, "httpHeaderValue1": headerSecret}}
}

// TestSecretsNeverLeaveThePlugin: endpoints that echo the request (URL with ?token=, Authorization, basic auth,
// the tenant header) in 401/403/500 bodies, seen by a Viewer through every surface: GET endpoints, health, query
// notices and errors, and the plugin's log.
func TestSecretsNeverLeaveThePlugin(t *testing.T) {
	var eps []map[string]string
	for _, status := range []int{401, 403, 500} {
		eps = append(eps, map[string]string{"name": fmt.Sprintf("echo-%d", status),
			"url": echoServer(t, status).URL + "/metrics?token=" + querySecret})
	}
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
	pc := harness.DataSourceContext(t, credentialed("secrets-direct", "", map[string]any{"mode": "direct", "endpoints": eps, "scrapeInterval": "1s"}), harness.User("Viewer"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	h, err := p.CheckHealth(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Message, "401 Unauthorized") || !strings.Contains(h.Message, `X-Scope-Orgid: xxxxx`) {
		t.Errorf("health lost the server's answer: %s", h.Message)
	}
	assertNoSecret(t, "health message", h.Message)
	assertNoSecret(t, "health details", string(h.JSONDetails))
	res, err := p.CallResource(ctx, pc, "GET", "endpoints", nil)
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, "GET endpoints", string(res.Body))
	if !strings.Contains(string(res.Body), "token=xxxxx") {
		t.Errorf("endpoint URLs not shown redacted: %s", res.Body)
	}
	now := time.Now()
	resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "queue"}, From: now.Add(-time.Minute), To: now, Interval: time.Second},
		harness.Query{RefID: "B", JSON: map[string]any{"queryType": "diagnosis"}, From: now.Add(-time.Minute), To: now, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for ref, r := range resp.Responses {
		b, _ := json.Marshal(r.Frames)
		assertNoSecret(t, "frames of "+ref, string(b))
		if r.Error != nil {
			assertNoSecret(t, "error of "+ref, r.Error.Error())
		}
	}
	if !strings.Contains(noticeText(resp.Responses["A"].Frames), "echo-401") {
		t.Errorf("notices do not name the failing endpoint: %q", noticeText(resp.Responses["A"].Frames))
	}
	assertNoSecret(t, "plugin log", p.Logs())
}

// TestPrometheusModeErrorsCarryNoSecret: a Prometheus behind a proxy that echoes the request in its errors.
func TestPrometheusModeErrorsCarryNoSecret(t *testing.T) {
	for _, status := range []int{401, 500} {
		srv := echoServer(t, status)
		p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))
		pc := harness.DataSourceContext(t, credentialed(fmt.Sprintf("secrets-prom-%d", status), srv.URL,
			map[string]any{"mode": "prometheus"}), harness.User("Viewer"))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		h, err := p.CheckHealth(ctx, pc)
		if err != nil {
			t.Fatal(err)
		}
		assertNoSecret(t, "health", h.Message)
		now := time.Now()
		resp, err := p.QueryData(ctx, t, pc, harness.Query{RefID: "A", JSON: map[string]any{"queryType": "promql", "expr": "up"}, From: now.Add(-time.Minute), To: now, Interval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := resp.Responses["A"]
		if r.Error == nil {
			t.Fatalf("status %d: no error", status)
		}
		assertNoSecret(t, "query error", r.Error.Error())
		res, err := p.CallResource(ctx, pc, "GET", "models", nil)
		if err != nil {
			t.Fatal(err)
		}
		assertNoSecret(t, "GET models", string(res.Body))
		assertNoSecret(t, "plugin log", p.Logs())
		cancel()
	}
}

// TestCredentialsStayAtTheirOrigin: redirects to another port, in both modes, and probes of unsaved URLs.
func TestCredentialsStayAtTheirOrigin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := harness.Start(t, harness.Executable(t, harness.DatasourceExecutable))

	t.Run("scrape redirected to another origin", func(t *testing.T) {
		other := &recorder{}
		target := other.server(t, nil)
		from := httptest.NewServer(http.RedirectHandler(target.URL+"/metrics", http.StatusFound))
		t.Cleanup(from.Close)
		pc := harness.DataSourceContext(t, credentialed("redirect-scrape", "", map[string]any{"mode": "direct", "scrapeInterval": "1s",
			"endpoints": []map[string]string{{"url": from.URL + "/metrics?token=" + querySecret, "name": "moved"}}}), harness.User("Viewer"))
		h, err := p.CheckHealth(ctx, pc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(h.Message, "redirects to") {
			t.Errorf("health does not explain the refused redirect: %s", h.Message)
		}
		if n := len(other.seen()); n != 0 {
			t.Errorf("the redirect target received %d requests", n)
		}
	})

	t.Run("Prometheus redirected within and across origins", func(t *testing.T) {
		other := &recorder{}
		elsewhere := other.server(t, nil)
		var referers []string
		var mu sync.Mutex
		mux := http.NewServeMux()
		mux.HandleFunc("/api/v1/status/buildinfo", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/moved/api/v1/status/buildinfo", http.StatusTemporaryRedirect)
		})
		mux.HandleFunc("/moved/api/v1/status/buildinfo", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			referers = append(referers, r.Header.Get("Referer"))
			mu.Unlock()
			_, _ = w.Write([]byte(`{"status":"success","data":{"version":"2.42.0"}}`))
		})
		mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		pc := harness.DataSourceContext(t, credentialed("redirect-prom", srv.URL, map[string]any{"mode": "prometheus"}), harness.User("Viewer"))
		h, err := p.CheckHealth(ctx, pc)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, "another origin") {
			t.Errorf("health = %v %s", h.Status, h.Message)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(referers) != 1 || referers[0] != "" {
			t.Errorf("same-origin redirect: followed %d times, Referer %q", len(referers), referers)
		}
		if n := len(other.seen()); n != 0 {
			t.Errorf("the other origin received %d requests", n)
		}
	})

	t.Run("probe", func(t *testing.T) {
		saved := &recorder{}
		savedSrv := saved.server(t, nil)
		unsaved := &recorder{}
		unsavedSrv := unsaved.server(t, nil)
		admin := harness.DataSourceContext(t, credentialed("probe-creds", "", map[string]any{"mode": "direct", "scrapeInterval": "1h",
			"endpoints": []map[string]string{{"url": savedSrv.URL + "/metrics", "name": "saved"}}}), harness.User("Admin"))
		probe := func(body string) *harness.ResourceResponse {
			res, err := p.CallResource(ctx, admin, "POST", "probe", []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		probe(`{"url":"` + unsavedSrv.URL + `/metrics"}`)
		probe(`{"url":"` + savedSrv.URL + `/metrics"}`)
		probe(`{"url":"` + unsavedSrv.URL + `/metrics","useStoredCredentials":true}`)
		u := unsaved.seen()
		if len(u) != 2 || u[0].Get("Authorization") != "" || u[0].Get("X-Scope-OrgID") != "" {
			t.Errorf("probe of an unsaved URL sent credentials: %v", u)
		}
		if len(u) == 2 && (u[1].Get("Authorization") == "" || u[1].Get("X-Scope-OrgID") != headerSecret) {
			t.Errorf("probe with useStoredCredentials sent none: %v", u[1])
		}
		if s := saved.seen(); len(s) == 0 || s[len(s)-1].Get("X-Scope-OrgID") != headerSecret {
			t.Errorf("probe of a saved endpoint lacks its credentials: %v", s)
		}
		for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://metadata.google.internal/computeMetadata/v1/",
			"http://[::ffff:169.254.169.254]/", "http://100.100.100.200/latest/meta-data/"} {
			res := probe(`{"url":"` + target + `","useStoredCredentials":true}`)
			if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "cloud-metadata") {
				t.Errorf("probe of %s: %d %s", target, res.Status, res.Body)
			}
		}
	})

	t.Run("metadata endpoints refused in settings unless allowed", func(t *testing.T) {
		eps := []map[string]string{{"url": "http://169.254.169.254/metrics", "name": "imds"}}
		pc := harness.DataSourceContext(t, harness.DataSource{UID: "deny", JSONData: map[string]any{"mode": "direct", "endpoints": eps}}, harness.User("Viewer"))
		h, err := p.CheckHealth(ctx, pc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(h.Message, "link-local or cloud-metadata address") {
			t.Errorf("health = %s", h.Message)
		}
		pc = harness.DataSourceContext(t, harness.DataSource{UID: "allow", JSONData: map[string]any{"mode": "direct", "endpoints": eps,
			"allowLinkLocalTargets": true, "scrapeInterval": "1s", "scrapeTimeout": "500ms"}}, harness.User("Viewer"))
		if h, err = p.CheckHealth(ctx, pc); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(h.Message, "Configuration error") || strings.Contains(h.Message, "cloud-metadata") {
			t.Errorf("allowLinkLocalTargets did not allow: %s", h.Message)
		}
	})
}
