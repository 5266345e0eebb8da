package discovery

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// writeFile replaces path's content at once, as a tool writing file_sd files should.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func names(es []Endpoint) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return strings.Join(out, ",")
}

func TestRunnerMergesUniqueAndBounded(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.yaml")
	writeFile(t, a, `[{"targets":["10.0.0.1:8000","10.0.0.2:8000"],"labels":{"pool":"p","role":"prefill"}},
		{"targets":["10.0.0.3:8000"],"labels":{"pool":"p","role":"decode","__metrics_path__":"/m","__scheme__":"https"}}]`)
	// b lists 10.0.0.1 again (scraped once) and a target whose template name collides with one of a's.
	writeFile(t, b, "- targets: ['10.0.0.1:8000', '10.0.0.9:9000']\n  labels: {pool: p, role: decode}\n")
	r := NewRunner([]Source{
		{Type: TypeFile, Path: a, Relabel: Relabel{NameTemplate: "{pool}-{__address__}", RoleLabel: "role"}},
		{Type: TypeFile, Path: b, Name: "yaml", Relabel: Relabel{NameTemplate: "{pool}-10.0.0.1:8000"}},
	}, Options{MaxEndpoints: 10, Reserved: []Endpoint{{Name: "static", URL: "http://10.0.0.2:8000/metrics"}}})
	defer r.Close()
	res := r.Refresh(context.Background())
	if got := names(res.Endpoints); got != "p-10.0.0.1:8000,p-10.0.0.3:8000,p-10.0.0.1:8000@10.0.0.9:9000" {
		t.Fatalf("endpoints %s (notices %v)", got, res.Notices)
	}
	if e := res.Endpoints[1]; e.URL != "https://10.0.0.3:8000/m" || e.Role != "decode" || e.Source != "file #1" {
		t.Errorf("second endpoint %+v", e)
	}
	if res.Reports[0].Found != 3 || res.Reports[0].Kept != 2 || res.Reports[1].Found != 2 || res.Reports[1].Kept != 1 {
		t.Errorf("reports %+v", res.Reports)
	}
	if !strings.Contains(strings.Join(res.Notices, "\n"), "1 target(s) share a name") {
		t.Errorf("notices %v", res.Notices)
	}

	// A source that fails keeps its previous targets and says so.
	writeFile(t, a, `[{"targets":["10.0.0.1:8000"`)
	res = r.Refresh(context.Background())
	if got := names(res.Endpoints); !strings.HasPrefix(got, "p-10.0.0.1:8000,p-10.0.0.3:8000") || !res.Reports[0].Stale {
		t.Errorf("after a bad write: %s %+v", got, res.Reports[0])
	}
	if n := strings.Join(res.Problems(), "\n"); !strings.Contains(n, "file #1: file_sd") || !strings.Contains(n, "using its previous targets") {
		t.Errorf("problems %v", res.Problems())
	}
}

func TestRunnerCutsAHundredThousandTargets(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[{"targets":[`)
	for i := range 100_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"10.%d.%d.%d:8000"`, i>>16, (i>>8)&255, i&255)
	}
	b.WriteString(`]}]`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, b.String())
	}))
	defer srv.Close()
	r := NewRunner([]Source{{Type: TypeHTTP, URL: srv.URL}}, Options{Client: srv.Client(), MaxEndpoints: 1000,
		Reserved: []Endpoint{{Name: "s", URL: "http://s/metrics"}}})
	defer r.Close()
	res := r.Refresh(context.Background())
	if len(res.Endpoints) != 999 {
		t.Fatalf("%d endpoints, want 999 (1000 less one static)", len(res.Endpoints))
	}
	if n := strings.Join(res.Notices, "\n"); !strings.Contains(n, "found more than 999 targets") {
		t.Errorf("notices %v", res.Notices)
	}
}

// endless is a body that never ends (a 1 GB answer, or more), counting what was read of it.
type endless struct{ read *atomic.Int64 }

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.read.Add(int64(len(p)))
	return len(p), nil
}

func TestHTTPRefusesAGigabyteAnswer(t *testing.T) {
	var read atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"targets":["a:1"],"labels":{"x":"`)
		io.CopyN(w, endless{&read}, 1<<30)
	}))
	defer srv.Close()
	r := NewRunner([]Source{{Type: TypeHTTP, URL: srv.URL}}, Options{Client: srv.Client(), MaxEndpoints: 10})
	defer r.Close()
	res := r.Refresh(context.Background())
	if len(res.Endpoints) != 0 || !strings.Contains(res.Reports[0].Error, "over the 16 MB limit") {
		t.Fatalf("result %+v", res)
	}
	if got := read.Load(); got >= 1<<30 {
		t.Errorf("the server wrote the whole %d bytes: the client read on", got)
	}
}

func TestHTTPErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>")
		default:
			http.Error(w, "nope", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	for path, want := range map[string]string{"/html": "not application/json", "/down": "503"} {
		r := NewRunner([]Source{{Type: TypeHTTP, URL: srv.URL + path}}, Options{Client: srv.Client(), MaxEndpoints: 10})
		res := r.Refresh(context.Background())
		r.Close()
		if !strings.Contains(res.Reports[0].Error, want) {
			t.Errorf("%s: %+v", path, res.Reports[0])
		}
	}
}

// A file rewritten a hundred times a second is read once per round, and every round sees one whole version.
func TestFileChangingAHundredTimesASecond(t *testing.T) {
	path := filepath.Join(t.TempDir(), "targets.json")
	version := func(n int) string {
		var ts []string
		for i := range n%16 + 1 {
			ts = append(ts, fmt.Sprintf(`"10.0.0.%d:8000"`, i+1))
		}
		return `[{"targets":[` + strings.Join(ts, ",") + `]}]`
	}
	writeFile(t, path, version(0))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				writeFile(t, path, version(n))
			}
		}
	}()
	r := NewRunner([]Source{{Type: TypeFile, Path: path}}, Options{MaxEndpoints: 100})
	defer r.Close()
	seen := map[int]bool{}
	for range 50 {
		res := r.Refresh(context.Background())
		if res.Reports[0].Error != "" {
			t.Fatalf("round failed: %s", res.Reports[0].Error)
		}
		seen[len(res.Endpoints)] = true
		time.Sleep(3 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if len(seen) < 2 {
		t.Errorf("saw only fleet sizes %v while the file changed", seen)
	}
}
