package datasource

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/fixtures/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func instance(t testing.TB, s backend.DataSourceInstanceSettings) *Datasource {
	t.Helper()
	inst, err := NewInstance(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	d := inst.(*Datasource)
	t.Cleanup(d.Dispose)
	return d
}

func TestLoadSettings(t *testing.T) {
	cases := []struct {
		name, json string
		err        string
	}{
		{"defaults", `{"endpoints":[{"url":"http://127.0.0.1:8000/metrics"}]}`, ""},
		{"no endpoints", `{"mode":"direct"}`, "at least one /metrics endpoint"},
		{"bad url", `{"endpoints":[{"url":"ftp://x/metrics"}]}`, "is not an http(s) URL"},
		{"duplicate", `{"endpoints":[{"url":"http://a/metrics"},{"url":"http://a/metrics"}]}`, "listed twice"},
		{"credentials redacted", `{"endpoints":[{"url":"http://u:pw@a/metrics"},{"url":"http://u:pw@a/metrics"}]}`, "http://xxxxx@a/metrics is listed twice"}, // the user name can be a token too
		{"unknown mode", `{"mode":"magic"}`, `mode "magic" is unknown`},
		{"interval too short", `{"endpoints":[{"url":"http://a/m"}],"scrapeInterval":"100ms"}`, "below the 1s minimum"},
		{"timeout longer than interval", `{"endpoints":[{"url":"http://a/m"}],"scrapeInterval":"5s","scrapeTimeout":"10s"}`, "longer than the scrape interval"},
		{"bad duration", `{"endpoints":[{"url":"http://a/m"}],"retention":"forever"}`, "not a duration"},
		{"seconds as number", `{"endpoints":[{"url":"http://a/m"}],"scrapeInterval":10}`, ""},
		{"not JSON", `{`, "invalid"},
		{"prometheus role label", `{"mode":"prometheus","roleLabel":"llm-d.ai/role"}`, `roleLabel "llm-d.ai/role" is not a Prometheus label name`},
		{"discovery alone", `{"discovery":[{"type":"dns","dnsName":"vllm.llm.svc","port":8000}]}`, ""},
		{"discovery source invalid", `{"discovery":[{"type":"dns","dnsName":"vllm"}]}`, "discovery source 1 (dns #1): dns A/AAAA records need a port"},
		{"discovery interval", `{"discovery":[{"type":"file","path":"/t.json"}],"discoveryInterval":"100ms"}`, "discovery interval 100ms is outside 1s–1h"},
		{"discovery http_sd egress", `{"discovery":[{"type":"http","url":"http://169.254.169.254/sd"}]}`, "discovery source 1 (http #1)"},
		{"discovery http_sd credentials", `{"discovery":[{"type":"http","url":"http://u:pw@[::1/sd"}]}`, "not an absolute http(s) URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := LoadSettings(backend.DataSourceInstanceSettings{JSONData: []byte(tc.json)})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode != ModeDirect || st.ScrapeInterval == 0 || st.ScrapeTimeout >= st.ScrapeInterval || st.Retention != Duration(time.Hour) {
					t.Fatalf("defaults not applied: %+v", st)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if strings.Contains(err.Error(), ":pw@") {
				t.Fatalf("password in error: %v", err)
			}
		})
	}
}

// TestEndpointAuth checks that the bearer token and basic-auth password from secureJsonData reach the endpoint
// and never appear in health messages, details or resources — also when the endpoint rejects them.
func TestEndpointAuth(t *testing.T) {
	body := fixture(t, "dynamo_vllm_worker_8081_v1_single_engine.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, basic := r.BasicAuth()
		if r.Header.Get("Authorization") == "Bearer tok-123" || (basic && user == "scraper" && pass == "pw-456") {
			_, _ = w.Write(body)
			return
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	settings := func(secure map[string]string, basicUser string) backend.DataSourceInstanceSettings {
		js, _ := json.Marshal(map[string]any{"endpoints": []map[string]string{{"url": srv.URL + "/metrics", "name": "w"}}})
		return backend.DataSourceInstanceSettings{UID: "u", JSONData: js, DecryptedSecureJSONData: secure,
			BasicAuthEnabled: basicUser != "", BasicAuthUser: basicUser}
	}
	cases := []struct {
		name   string
		s      backend.DataSourceInstanceSettings
		status backend.HealthStatus
		secret string
	}{
		{"bearer", settings(map[string]string{"bearerToken": "tok-123"}, ""), backend.HealthStatusOk, "tok-123"},
		{"basic", settings(map[string]string{"basicAuthPassword": "pw-456"}, "scraper"), backend.HealthStatusOk, "pw-456"},
		{"wrong bearer", settings(map[string]string{"bearerToken": "tok-wrong"}, ""), backend.HealthStatusError, "tok-wrong"},
		{"wrong password", settings(map[string]string{"basicAuthPassword": "pw-wrong"}, "scraper"), backend.HealthStatusError, "pw-wrong"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := instance(t, tc.s)
			res, err := d.CheckHealth(context.Background(), &backend.CheckHealthRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("status %v: %s", res.Status, res.Message)
			}
			if tc.status == backend.HealthStatusError && !strings.Contains(res.Message, "401") {
				t.Errorf("rejection not explained: %s", res.Message)
			}
			if tc.status == backend.HealthStatusOk && !strings.Contains(res.Message, "dynamo-worker") {
				t.Errorf("flavor not reported: %s", res.Message)
			}
			for _, text := range []string{res.Message, string(res.JSONDetails)} {
				if strings.Contains(text, tc.secret) {
					t.Fatalf("secret in health result: %s", text)
				}
			}
		})
	}
}

func TestPrometheusModeUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d := instance(t, backend.DataSourceInstanceSettings{JSONData: []byte(`{"mode":"prometheus"}`), URL: "http://" + addr})
	res, _ := d.CheckHealth(context.Background(), &backend.CheckHealthRequest{})
	if res.Status != backend.HealthStatusError || !strings.Contains(res.Message, "unreachable") {
		t.Fatalf("health = %v %q", res.Status, res.Message)
	}
}

type captureSender struct{ res *backend.CallResourceResponse }

func (c *captureSender) Send(r *backend.CallResourceResponse) error { c.res = r; return nil }

func TestProbeIsAdminOnly(t *testing.T) {
	body := fixture(t, "dynamo_vllm_worker_8081_v1_single_engine.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	defer srv.Close()
	js, _ := json.Marshal(map[string]any{"endpoints": []map[string]string{{"url": srv.URL + "/metrics"}}})
	d := instance(t, backend.DataSourceInstanceSettings{UID: "u", JSONData: js})
	call := func(role, payload string) (int, string) {
		var user *backend.User
		if role != "" {
			user = &backend.User{Login: role, Role: role}
		}
		var s captureSender
		err := d.CallResource(context.Background(), &backend.CallResourceRequest{
			PluginContext: backend.PluginContext{User: user}, Method: http.MethodPost, Path: "probe", URL: "probe", Body: []byte(payload),
		}, &s)
		if err != nil {
			t.Fatal(err)
		}
		return s.res.Status, string(s.res.Body)
	}
	if code, body := call("Admin", `{"url":"`+srv.URL+`/metrics"}`); code != 200 || !strings.Contains(body, `"up":true`) || !strings.Contains(body, "dynamo-worker") {
		t.Fatalf("admin probe = %d %s", code, body)
	}
	if code, body := call("Admin", `{"url":"http://127.0.0.1:1/metrics"}`); code != 200 || !strings.Contains(body, `"up":false`) || !strings.Contains(body, "refused") {
		t.Fatalf("probe of a closed port = %d %s", code, body)
	}
	if code, _ := call("Admin", `{"url":"file:///etc/passwd"}`); code != 400 {
		t.Fatalf("non-http URL accepted: %d", code)
	}
	for _, role := range []string{"Editor", "Viewer", ""} {
		if code, _ := call(role, `{"url":"`+srv.URL+`/metrics"}`); code != http.StatusForbidden {
			t.Fatalf("%q probe = %d, want 403", role, code)
		}
	}
}

// TestHealthWaitsForTheRoundInFlight: a health check made while a scrape round is in flight waits for that round
// (up to a scrape timeout) before its own; its deadline used to leave its own round only 2 s, so an endpoint that
// answers within the timeout was reported timed out (pkg/e2e saw every endpoint "timed out" on a loaded machine).
func TestHealthWaitsForTheRoundInFlight(t *testing.T) {
	body := fixture(t, "dynamo_vllm_worker_8081_v1_single_engine.txt")
	inFlight := make(chan struct{}, 1)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case inFlight <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer func() { close(release); hanging.Close() }()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2500 * time.Millisecond): // within the 3 s timeout
			_, _ = w.Write(body)
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	js, _ := json.Marshal(map[string]any{"scrapeInterval": "3s", "scrapeTimeout": "3s", "endpoints": []map[string]string{
		{"url": hanging.URL + "/metrics", "name": "hanging"}, {"url": slow.URL + "/metrics", "name": "slow"}}})
	d := instance(t, backend.DataSourceInstanceSettings{UID: "u", JSONData: js})
	select {
	case <-inFlight: // the instance's first round has started
	case <-time.After(time.Minute):
		t.Fatal("the instance never scraped")
	}
	res, err := d.CheckHealth(context.Background(), &backend.CheckHealthRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Message, "1 of 2 endpoint(s) reachable") || !strings.Contains(res.Message, "hanging: scrape") {
		t.Fatalf("health while a round is in flight: %s", res.Message)
	}
}
