package datasource

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// fuzzSecret is a secret value the fuzzed settings carry; no error or response may ever contain it.
const fuzzSecret = "fuzz-secret-7c1f9e"

// FuzzSettings feeds arbitrary jsonData through LoadSettings: every input is refused with a bounded error that
// names no secret, or accepted with every limit inside its range (so nothing downstream can overflow).
func FuzzSettings(f *testing.F) {
	for _, seed := range []string{
		`{"endpoints":[{"url":"http://127.0.0.1:8000/metrics"}]}`,
		`{"mode":"prometheus","httpMethod":"GET","scrapeInterval":"15s"}`,
		`{"endpoints":[{"url":"http://a/metrics","name":"x"},{"url":"http://A:80/metrics/","name":"y"}]}`,
		`{"endpoints":[{"url":"http://a:8000/metrics","name":"b:9000"},{"url":"http://b:9000/metrics"}]}`,
		`{"endpoints":[{"url":"http://u:pw@a/metrics?token=abc"}],"maxMemoryMB":8796093022208,"maxBodyMB":-1}`,
		`{"endpoints":[{"url":"http://a/m"}],"scrapeInterval":1e300,"retention":"-5s","scrapeTimeout":"NaN"}`,
		`{"endpoints":[{"url":"ftp://x"}],"maxSamples":1e30}`, `{"mode":7}`, `[]`, `null`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := LoadSettings(backend.DataSourceInstanceSettings{JSONData: raw,
			DecryptedSecureJSONData: map[string]string{SecureBearerToken: fuzzSecret}})
		if err != nil {
			if strings.Contains(err.Error(), fuzzSecret) {
				t.Fatalf("error names the bearer token: %v", err)
			}
			if len(err.Error()) > 1<<20 {
				t.Fatalf("error is %d bytes", len(err.Error()))
			}
			return
		}
		if st.MaxMemoryMB < MinMemoryMB || st.MaxMemoryMB > MaxMemoryMB || st.MaxBodyMB < 0 || st.MaxBodyMB > MaxBodyMB ||
			st.MaxSamples < 0 || st.MaxSamples > MaxSamples || st.MaxMemoryBytes() <= 0 || st.MaxBodyBytes() < 0 {
			t.Fatalf("accepted limits out of range: %+v", st)
		}
		if st.ScrapeInterval < Duration(MinScrapeInterval) || st.ScrapeInterval > Duration(MaxScrapeInterval) ||
			st.ScrapeTimeout > st.ScrapeInterval || st.Retention > Duration(MaxRetention) {
			t.Fatalf("accepted durations out of range: %+v", st)
		}
		names := map[string]bool{}
		for _, e := range st.Endpoints {
			if names[e.DisplayName()] {
				t.Fatalf("accepted two endpoints named %q", e.DisplayName())
			}
			names[e.DisplayName()] = true
		}
	})
}

// resourceSender collects a resource answer.
type resourceSender struct{ resp *backend.CallResourceResponse }

func (s *resourceSender) Send(r *backend.CallResourceResponse) error {
	if s.resp == nil {
		s.resp = r
	} else {
		s.resp.Body = append(s.resp.Body, r.Body...)
	}
	return nil
}

// FuzzResources sends arbitrary resource calls, as any Viewer can: every one is answered with JSON of bounded
// size, never a panic or a 5xx of the plugin's own making, and never with a secret.
func FuzzResources(f *testing.F) {
	for _, seed := range []struct {
		method, path, query, body, role string
	}{
		{"GET", "endpoints", "", "", "Viewer"},
		{"GET", "label-values", "label=model_name", "", "Viewer"},
		{"GET", "label-values", "label=" + strings.Repeat("x", 300), "", "Viewer"},
		{"POST", "probe", "", `{"url":"http://127.0.0.1:1/metrics"}`, "Viewer"},
		{"POST", "probe", "", `{"url":"http://127.0.0.1:1/metrics","useStoredCredentials":true}`, "Admin"},
		{"POST", "probe", "", `{"url":"ftp://x"}`, "Admin"},
		{"POST", "probe", "", `{"url":`, "Admin"},
		{"GET", "../../etc/passwd", "", "", "Viewer"},
		{"DELETE", "models", "", "", "Editor"},
		{"GET", strings.Repeat("a/", 5000), "", "", "Viewer"},
	} {
		f.Add(seed.method, seed.path, seed.query, []byte(seed.body), seed.role)
	}
	jd, _ := json.Marshal(map[string]any{"mode": "direct", "scrapeInterval": "1h",
		"endpoints": []map[string]string{{"url": "http://127.0.0.1:1/metrics?token=" + fuzzSecret, "name": "refused"}}})
	d := instance(f, backend.DataSourceInstanceSettings{UID: "fuzz", JSONData: jd,
		DecryptedSecureJSONData: map[string]string{SecureBearerToken: fuzzSecret}})
	f.Fuzz(func(t *testing.T, method, path, rawQuery string, body []byte, role string) {
		if !utf8.ValidString(path) || !utf8.ValidString(rawQuery) {
			return // Grafana only passes valid UTF-8 paths
		}
		u := &url.URL{Path: "/" + path, RawQuery: rawQuery}
		s := &resourceSender{}
		ctx := backend.WithUser(context.Background(), &backend.User{Login: "fuzz", Role: role})
		err := d.CallResource(ctx, &backend.CallResourceRequest{Method: method, Path: path, URL: u.String(), Body: body,
			PluginContext: backend.PluginContext{User: &backend.User{Login: "fuzz", Role: role}}}, s)
		if err != nil {
			return // the adapter refused a request it cannot form; Grafana shows that as an error
		}
		if s.resp == nil {
			t.Fatal("no response")
		}
		if s.resp.Status >= 500 && s.resp.Status != 502 {
			t.Fatalf("%s %s: status %d: %s", method, path, s.resp.Status, s.resp.Body)
		}
		if len(s.resp.Body) > 64<<10 {
			t.Fatalf("%s %s: %d-byte answer", method, path, len(s.resp.Body))
		}
		if strings.Contains(string(s.resp.Body), fuzzSecret) {
			t.Fatalf("%s %s: answer holds the secret: %s", method, path, s.resp.Body)
		}
		if strings.EqualFold(method, "POST") && strings.Trim(path, "/") == "probe" && role != "Admin" && s.resp.Status != 403 {
			t.Fatalf("probe as %s answered %d", role, s.resp.Status)
		}
	})
}
