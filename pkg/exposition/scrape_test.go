package exposition

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
)

const omBody = "# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total{engine=\"0\"} 42 # {trace_id=\"a\"} 1\nvllm:prompt_tokens_created{engine=\"0\"} 1.7e9\n# EOF\n"

// server serves body with the given headers; gzip-compresses when asked and
// gz is set. The last request's headers are recorded in *seen.
func server(t *testing.T, status int, contentType string, body []byte, gz bool, seen *http.Header) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			*seen = r.Header.Clone()
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing
		}
		if gz && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(status)
			zw := gzip.NewWriter(w)
			zw.Write(body)
			zw.Close()
			return
		}
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetch(t *testing.T) {
	fx := fixtures(t)["synthetic_v1_8engines_full.txt"]
	tests := []struct {
		name        string
		contentType string
		body        []byte
		gz          bool
		opts        ScrapeOptions
		format      Format
		samples     int
	}{
		{"text", string(expfmt.FmtText), fx, false, ScrapeOptions{}, FormatText, 4280},
		{"gzip", string(expfmt.FmtText), fx, true, ScrapeOptions{}, FormatText, 4280},
		{"openmetrics", string(expfmt.FmtOpenMetrics_1_0_0), []byte(omBody), true, ScrapeOptions{PreferOpenMetrics: true}, FormatOpenMetrics, 2},
		{"no content type detects OpenMetrics", "", []byte(omBody), false, ScrapeOptions{}, FormatOpenMetrics, 2},
		{"keep filter", "text/plain", fx, true, ScrapeOptions{Parse: ParseOptions{Keep: func(n string) bool { return n == "python_info" }}}, FormatText, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen http.Header
			srv := server(t, http.StatusOK, tc.contentType, tc.body, tc.gz, &seen)
			res, err := Fetch(context.Background(), srv.Client(), srv.URL+"/metrics", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Scrape.Format != tc.format || res.Scrape.NumSamples() != tc.samples {
				t.Errorf("format %v with %d samples, want %v with %d", res.Scrape.Format, res.Scrape.NumSamples(), tc.format, tc.samples)
			}
			if res.BodyBytes != int64(len(tc.body)) || res.StatusCode != 200 || res.ContentType != tc.contentType {
				t.Errorf("result %+v", res)
			}
			if tc.gz && res.WireBytes >= res.BodyBytes || !tc.gz && res.WireBytes != res.BodyBytes {
				t.Errorf("wire %d bytes for body %d (gzip %v)", res.WireBytes, res.BodyBytes, tc.gz)
			}
			if res.Duration <= 0 || res.ParseDuration <= 0 || res.ParseDuration > res.Duration || res.Start.IsZero() {
				t.Errorf("durations %v %v", res.Duration, res.ParseDuration)
			}
			accept := seen.Get("Accept")
			if !strings.Contains(accept, "text/plain; version=0.0.4") || !strings.Contains(accept, "application/openmetrics-text; version=1.0.0") {
				t.Errorf("Accept %q", accept)
			}
			if tc.opts.PreferOpenMetrics != strings.HasPrefix(accept, "application/openmetrics-text") {
				t.Errorf("Accept %q does not reflect PreferOpenMetrics", accept)
			}
			if seen.Get("Accept-Encoding") != "gzip" {
				t.Errorf("Accept-Encoding %q", seen.Get("Accept-Encoding"))
			}
		})
	}
}

func TestFetchReusedBuffers(t *testing.T) {
	a := server(t, 200, "text/plain", []byte("# HELP a first\na{x=\"1\"} 1\n"), true, nil)
	b := server(t, 200, "text/plain", []byte("# HELP b second\nb{y=\"2\"} 2\n"), true, nil)
	ra, err := Fetch(context.Background(), a.Client(), a.URL, ScrapeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(context.Background(), b.Client(), b.URL, ScrapeOptions{}); err != nil {
		t.Fatal(err)
	}
	f := ra.Scrape.Families[0]
	if f.Name != "a" || f.Help != "first" || f.Samples[0].Labels.Get("x") != "1" {
		t.Errorf("first scrape changed by the second: %+v", f)
	}
}

func TestFetchErrors(t *testing.T) {
	big := bytes.Repeat([]byte("metric_with_a_long_name{label=\"value\"} 1\n"), 1<<15) // ~1.3 MiB
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	slowBody := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("a 1\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(slowBody.Close)
	refused := refusedURL(t)

	tests := []struct {
		name   string
		url    func(t *testing.T) string
		opts   ScrapeOptions
		is     error
		status int
		msg    []string
	}{
		{"500 with body", srvURL(server(t, 500, "text/plain", []byte("engine dead: CUDA out of memory\n"), false, nil)), ScrapeOptions{}, nil, 500,
			[]string{"HTTP status 500 Internal Server Error", "CUDA out of memory"}},
		{"404 gzip body", srvURL(server(t, 404, "text/plain", []byte("no such path"), true, nil)), ScrapeOptions{}, nil, 404,
			[]string{"404", "no such path"}},
		{"body too large", srvURL(server(t, 200, "text/plain", big, false, nil)), ScrapeOptions{MaxBodyBytes: 1 << 20}, ErrBodyTooLarge, 0,
			[]string{"body exceeds 1 MiB limit"}},
		{"gzip bomb too large", srvURL(server(t, 200, "text/plain", bytes.Repeat([]byte("a 1\n"), 4<<20), true, nil)), ScrapeOptions{}, ErrBodyTooLarge, 0,
			[]string{"body exceeds 8 MiB limit"}},
		{"chunked too large", srvURL(chunkedServer(t, big)), ScrapeOptions{MaxBodyBytes: 1000}, ErrBodyTooLarge, 0,
			[]string{"body exceeds 1000 bytes limit"}},
		{"sample limit", srvURL(server(t, 200, "text/plain", big, true, nil)), ScrapeOptions{Parse: ParseOptions{MaxSamples: 100}}, ErrSampleLimit, 0,
			[]string{"more than 100 samples"}},
		{"parse error", srvURL(server(t, 200, "text/plain", []byte("ok 1\nbroken{ 1\n"), false, nil)), ScrapeOptions{}, nil, 0,
			[]string{"line 2"}},
		{"timeout", srvURL(slow), ScrapeOptions{Timeout: 50 * time.Millisecond}, context.DeadlineExceeded, 0,
			[]string{"timed out after 50ms"}},
		{"timeout while reading body", srvURL(slowBody), ScrapeOptions{Timeout: 50 * time.Millisecond}, context.DeadlineExceeded, 0,
			[]string{"timed out after 50ms"}},
		{"connection refused", func(*testing.T) string { return refused }, ScrapeOptions{}, nil, 0,
			[]string{"refused"}},
		{"unsupported scheme", func(*testing.T) string { return "file:///etc/passwd" }, ScrapeOptions{}, nil, 0,
			[]string{`unsupported URL scheme "file"`}},
		{"unsupported encoding", srvURL(encodingServer(t, "br")), ScrapeOptions{}, nil, 0,
			[]string{`unsupported Content-Encoding "br"`}},
		{"invalid gzip", srvURL(encodingServer(t, "gzip")), ScrapeOptions{}, nil, 0,
			[]string{"invalid gzip body"}},
		{"protobuf answer", srvURL(server(t, 200, string(expfmt.FmtProtoDelim), []byte("x"), false, nil)), ScrapeOptions{}, nil, 0,
			[]string{"unsupported protobuf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fetch(context.Background(), nil, tc.url(t), tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			var fe *FetchError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T, want *FetchError", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if fe.StatusCode != tc.status {
				t.Errorf("status %d, want %d", fe.StatusCode, tc.status)
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

func TestFetchErrorsHideCredentials(t *testing.T) {
	const user, pass, query = "alice", "s3cr3t-pa55", "token=qwerty123"
	withCreds := func(base string) string {
		return strings.Replace(base, "http://", "http://"+user+":"+pass+"@", 1) + "/metrics?" + query
	}
	var seen http.Header
	fail := server(t, 503, "text/plain", []byte("overloaded"), false, &seen)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(slow.Close)
	big := server(t, 200, "text/plain", bytes.Repeat([]byte("a 1\n"), 1000), false, nil)
	bad := server(t, 200, "text/plain", []byte("a{ 1\n"), false, nil)

	urls := map[string]string{
		"status":        withCreds(fail.URL),
		"refused":       withCreds(strings.TrimSuffix(refusedURL(t), "/metrics")),
		"timeout":       withCreds(slow.URL),
		"too large":     withCreds(big.URL),
		"parse error":   withCreds(bad.URL),
		"invalid URL":   "http://" + user + ":" + pass + "@[::1/metrics?" + query,
		"invalid port":  "http://" + user + ":" + pass + "@127.0.0.1:99999/metrics?" + query,
		"bad userinfo?": "http://" + user + ":" + pass + "%zz@127.0.0.1/?" + query,
	}
	for name, u := range urls {
		t.Run(name, func(t *testing.T) {
			_, err := Fetch(context.Background(), nil, u, ScrapeOptions{Timeout: 100 * time.Millisecond, MaxBodyBytes: 100})
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			msg := err.Error()
			var fe *FetchError
			if errors.As(err, &fe) {
				msg += " " + fe.URL
			}
			for _, secret := range []string{user, pass, "qwerty123"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error leaks %q: %s", secret, msg)
				}
			}
		})
	}
	// The credentials are still used for the request itself.
	if u, p, ok := (&http.Request{Header: seen}).BasicAuth(); !ok || u != user || p != pass {
		t.Errorf("server saw no basic auth from the URL userinfo")
	}
}

func srvURL(s *httptest.Server) func(*testing.T) string {
	return func(*testing.T) string { return s.URL + "/metrics" }
}

// refusedURL returns a URL on 127.0.0.1 where nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/metrics"
}

// chunkedServer streams body without Content-Length.
func chunkedServer(t *testing.T, body []byte) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for chunk := range slicesChunk(body, 4096) {
			w.Write(chunk)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func slicesChunk(b []byte, n int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			k := min(n, len(b))
			if !yield(b[:k]) {
				return
			}
			b = b[k:]
		}
	}
}

// encodingServer claims a Content-Encoding over a plain body.
func encodingServer(t *testing.T, enc string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", enc)
		w.Write([]byte("a 1\n"))
	}))
	t.Cleanup(srv.Close)
	return srv
}
