package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

const cfgName = "ms_service_profiler_config.json"

// original has fields the app does not know, in an order and format that must survive every write.
const original = "{\n  \"enable\": 1,\n  \"prof_dir\": \"/home/ma/.ms_server_profiler/\",\n  \"metric_enable\": 0,\n  \"acl_task_time\": 2,\n  \"api_filter\": \"matmul;\\u00e9\",\n  \"timelimit\": 1.50\n}\n"

func settingsFor(path string, editors bool) map[string]any {
	return map[string]any{
		"profilerConfigs":     []map[string]string{{"name": "ascend-dp2", "path": path}},
		"allowEditorsToWrite": editors,
	}
}

func TestWriteRoles(t *testing.T) {
	tests := []struct {
		role    string
		editors bool
		status  int
	}{
		{"", false, http.StatusForbidden},
		{"Viewer", false, http.StatusForbidden},
		{"Viewer", true, http.StatusForbidden},
		{"None", true, http.StatusForbidden},
		{"Editor", false, http.StatusForbidden},
		{"Editor", true, http.StatusOK},
		{"Admin", false, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s editors=%v", tt.role, tt.editors), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), cfgName)
			writeFile(t, p, original)
			a, logs := newTestApp(t, settingsFor(p, tt.editors))
			res := call(t, a, user(tt.role), http.MethodPut, "profiler-configs/ascend-dp2/metric-enable", `{"value": 1}`)
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.raw)
			}
			list := call(t, a, user(tt.role), http.MethodGet, "profiler-configs", "")
			if list.body["canWrite"] != (tt.status == http.StatusOK) {
				t.Errorf("canWrite = %v", list.body["canWrite"])
			}
			if tt.status != http.StatusOK {
				if got := readFile(t, p); got != original {
					t.Errorf("refused write changed the file:\n%s", got)
				}
				if res.body["error"] == "" || !strings.Contains(logs.String(), "Refused") {
					t.Errorf("body %s, logs %s", res.raw, logs)
				}
				return
			}
			if res.body["metricEnable"] != 1.0 {
				t.Errorf("answer %s", res.raw)
			}
		})
	}
}

func TestWritePreservesTheRest(t *testing.T) {
	p := filepath.Join(t.TempDir(), cfgName)
	writeFile(t, p, original)
	a, logs := newTestApp(t, settingsFor(p, false))
	admin := user("Admin")
	for _, v := range []string{"1", "0", "1"} {
		res := call(t, a, admin, http.MethodPut, "profiler-configs/ascend-dp2/metric-enable", `{"value": `+v+`}`)
		if res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.raw)
		}
		want := strings.Replace(original, `"metric_enable": 0`, `"metric_enable": `+v, 1)
		if got := readFile(t, p); got != want {
			t.Fatalf("after value %s the file is\n%s\nwant\n%s", v, got, want)
		}
		if res.body["metricEnable"] != map[string]float64{"0": 0, "1": 1}[v] || res.body["enable"] != 1.0 || res.body["modified"] == "" {
			t.Errorf("answer %s", res.raw)
		}
	}
	// Each write is logged with who did it and the old and new value; email addresses are not logged.
	l := logs.String()
	for _, want := range []string{"user admin role Admin old 0 new 1", "user admin role Admin old 1 new 0"} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %q:\n%s", want, l)
		}
	}
	if strings.Contains(l, "@example.com") {
		t.Errorf("log has the user's email:\n%s", l)
	}
}

func TestResourceErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good", cfgName)
	malformed := filepath.Join(dir, "bad", cfgName)
	missing := filepath.Join(dir, "missing", cfgName)
	parentIsFile := filepath.Join(dir, "file", cfgName)
	for _, d := range []string{"good", "bad", "missing"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, good, `{"metric_enable": 0}`)
	writeFile(t, malformed, `{"metric_enable": 0,`)
	writeFile(t, filepath.Join(dir, "file"), "x")
	a, _ := newTestApp(t, map[string]any{"profilerConfigs": []map[string]string{
		{"name": "good", "path": good}, {"name": "bad", "path": malformed},
		{"name": "missing", "path": missing}, {"name": "file", "path": parentIsFile},
	}})
	admin := user("Admin")
	tests := []struct {
		name, method, path, body string
		status                   int
		errorHas                 string
	}{
		{"unknown name", "PUT", "profiler-configs/nope/metric-enable", `{"value":1}`, 404, `no profiler config named "nope"`},
		{"dot-dot name", "PUT", "profiler-configs/../good/metric-enable", `{"value":1}`, 404, ""},
		{"encoded dot-dot", "PUT", "profiler-configs/%2e%2e/metric-enable", `{"value":1}`, 404, ""},
		{"empty body", "PUT", "profiler-configs/good/metric-enable", ``, 400, "body must be"},
		{"not JSON", "PUT", "profiler-configs/good/metric-enable", `on`, 400, "body must be"},
		{"value 2", "PUT", "profiler-configs/good/metric-enable", `{"value":2}`, 400, "body must be"},
		{"value true", "PUT", "profiler-configs/good/metric-enable", `{"value":true}`, 400, "body must be"},
		{"value string", "PUT", "profiler-configs/good/metric-enable", `{"value":"1"}`, 400, "body must be"},
		{"unknown field", "PUT", "profiler-configs/good/metric-enable", `{"value":1,"path":"/etc/passwd"}`, 400, "body must be"},
		{"no value", "PUT", "profiler-configs/good/metric-enable", `{}`, 400, "body must be"},
		{"a second value after it", "PUT", "profiler-configs/good/metric-enable", `{"value":1}{"value":0}`, 400, "body must be"},
		{"minus zero", "PUT", "profiler-configs/good/metric-enable", `{"value":-0}`, 400, "body must be"},
		{"malformed file", "PUT", "profiler-configs/bad/metric-enable", `{"value":1}`, 422, "malformed profiler config"},
		{"parent is a file", "PUT", "profiler-configs/file/metric-enable", `{"value":1}`, 500, "not a directory"},
		{"wrong method", "POST", "profiler-configs/good/metric-enable", `{"value":1}`, 405, "use PUT"},
		{"wrong method on list", "DELETE", "profiler-configs", ``, 405, "use GET"},
		{"unknown route", "GET", "nothing-here", ``, 404, "no such resource"},
		{"missing file is created", "PUT", "profiler-configs/missing/metric-enable", `{"value":1}`, 200, ""},
		{"one file", "GET", "profiler-configs/good", ``, 200, ""},
		{"one unknown file", "GET", "profiler-configs/nope", ``, 404, "no profiler config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, a, admin, tt.method, tt.path, tt.body)
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.raw)
			}
			if msg, _ := res.body["error"].(string); !strings.Contains(msg, tt.errorHas) || (tt.status >= 400 && msg == "") {
				t.Errorf("error %q, want it to contain %q", msg, tt.errorHas)
			}
		})
	}
	if got := readFile(t, malformed); got != `{"metric_enable": 0,` {
		t.Errorf("malformed file was changed: %q", got)
	}
	if got := readFile(t, missing); got != "{\n    \"enable\": 0,\n    \"metric_enable\": 1\n}\n" {
		t.Errorf("created file: %q", got)
	}
	if got := readFile(t, good); got != `{"metric_enable": 0}` {
		t.Errorf("good file was changed: %q", got)
	}
}

func TestListStateAndExposure(t *testing.T) {
	serve := func(body string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	on := serve("# TYPE vllm_profiling_batch_size histogram\nvllm_profiling_batch_size_bucket{dp=\"0\",le=\"+Inf\"} 3\nvllm_profiling_batch_size_sum{dp=\"0\"} 9\nvllm_profiling_batch_size_count{dp=\"0\"} 3\n# TYPE vllm_profiling_input_total counter\nvllm_profiling_input_total{dp=\"0\"} 7\nvllm:num_requests_running{engine=\"0\"} 1\n")
	off := serve("vllm:num_requests_running{engine=\"0\"} 1\n")
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	dir := t.TempDir()
	paths := map[string]string{}
	for _, n := range []string{"on", "off", "down", "nourl", "missing", "bad"} {
		paths[n] = filepath.Join(dir, n+".json")
	}
	writeFile(t, paths["on"], `{"enable": 0, "metric_enable": 1}`)
	writeFile(t, paths["off"], `{"enable": true}`)
	writeFile(t, paths["down"], `{"metric_enable": 2}`)
	writeFile(t, paths["nourl"], `{"metric_enable": 0}`)
	writeFile(t, paths["bad"], `[]`)
	secretURL := strings.Replace(off, "http://", "http://scraper:s3cret@", 1) + "/metrics?token=t0ken"
	a, logs := newTestApp(t, map[string]any{"profilerConfigs": []map[string]string{
		{"name": "on", "path": paths["on"], "metricsUrl": on + "/metrics"},
		{"name": "off", "path": paths["off"], "metricsUrl": secretURL},
		{"name": "down", "path": paths["down"], "metricsUrl": down.URL + "/metrics"},
		{"name": "nourl", "path": paths["nourl"]},
		{"name": "missing", "path": paths["missing"]},
		{"name": "bad", "path": paths["bad"]},
	}})
	res := call(t, a, user("Viewer"), http.MethodGet, "profiler-configs", "")
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	var list struct {
		ProfilerConfigs []fileView
		CanWrite        bool
	}
	if err := json.Unmarshal([]byte(res.raw), &list); err != nil {
		t.Fatal(err)
	}
	if list.CanWrite || len(list.ProfilerConfigs) != 6 {
		t.Fatalf("list %s", res.raw)
	}
	tru, fal := true, false
	tests := []struct {
		name           string
		exists         bool
		metric, enable int
		exposed        *bool
		families       int
		problem, err   string
		exposedErr     bool
	}{
		{name: "on", exists: true, metric: 1, exposed: &tru, families: 2},
		{name: "off", exists: true, enable: 1, exposed: &fal},
		{name: "down", exists: true, problem: "metric_enable is 2", exposedErr: true},
		{name: "nourl", exists: true},
		{name: "missing"},
		{name: "bad", err: "malformed profiler config"},
	}
	for i, tt := range tests {
		v := list.ProfilerConfigs[i]
		if v.Name != tt.name || v.Exists != tt.exists || v.MetricEnable != tt.metric || v.Enable != tt.enable ||
			fmt.Sprint(deref(v.Exposed)) != fmt.Sprint(deref(tt.exposed)) || v.ProfilingFamilies != tt.families ||
			!strings.Contains(v.Problem, tt.problem) || !strings.Contains(v.Error, tt.err) || (v.ExposedError != "") != tt.exposedErr ||
			(v.Exists && v.Modified == "") {
			t.Errorf("%s: got %+v", tt.name, v)
		}
	}
	for _, secret := range []string{"s3cret", "t0ken"} {
		if strings.Contains(res.raw, secret) || strings.Contains(logs.String(), secret) {
			t.Errorf("%s leaked:\n%s\n%s", secret, res.raw, logs)
		}
	}
}

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func TestInvalidSettings(t *testing.T) {
	tests := []struct {
		name, jsonData, want string
	}{
		{"not JSON", `{"profilerConfigs": [`, "not valid"},
		{"wrong type", `{"profilerConfigs": {"a": 1}}`, "not valid"},
		{"empty name", `{"profilerConfigs": [{"name": "", "path": "/x/c.json"}]}`, "name must be"},
		{"slash in name", `{"profilerConfigs": [{"name": "a/b", "path": "/x/c.json"}]}`, "name must be"},
		{"duplicate name", `{"profilerConfigs": [{"name": "a", "path": "/x/c.json"}, {"name": "a", "path": "/y/c.json"}]}`, "used twice"},
		{"relative path", `{"profilerConfigs": [{"name": "a", "path": "c.json"}]}`, "not absolute"},
		{"empty path", `{"profilerConfigs": [{"name": "a", "path": ""}]}`, "path is empty"},
		{"bad metrics URL", `{"profilerConfigs": [{"name": "a", "path": "/x/c.json", "metricsUrl": "ftp://h/metrics"}]}`, "metricsUrl must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newApp([]byte(tt.jsonData), nil, &memLogger{})
			for _, req := range [][2]string{{"GET", "profiler-configs"}, {"GET", "profiler-configs/a"}, {"PUT", "profiler-configs/a/metric-enable"}} {
				res := call(t, a, user("Admin"), req[0], req[1], `{"value":1}`)
				if msg, _ := res.body["error"].(string); res.status != 500 || !strings.Contains(msg, tt.want) {
					t.Errorf("%v: %d %s", req, res.status, res.raw)
				}
			}
			h, _ := a.CheckHealth(t.Context(), &backend.CheckHealthRequest{})
			if h.Status != backend.HealthStatusError || !strings.Contains(h.Message, tt.want) {
				t.Errorf("health %v %q", h.Status, h.Message)
			}
			if res := call(t, a, nil, "GET", "status", ""); res.status != 200 {
				t.Errorf("status route: %d", res.status)
			}
		})
	}
	inst, err := NewInstance(t.Context(), backend.AppInstanceSettings{JSONData: []byte(`{"profilerConfigs": 3}`)})
	if err != nil || inst == nil {
		t.Fatalf("NewInstance must not fail on bad settings: %v", err)
	}
}

func TestConcurrentToggles(t *testing.T) {
	p := filepath.Join(t.TempDir(), cfgName)
	writeFile(t, p, original)
	// Two instances stand for two Grafana processes sharing the file.
	apps := []*App{}
	for range 2 {
		a, _ := newTestApp(t, settingsFor(p, false))
		apps = append(apps, a)
	}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := call(t, apps[i%2], user("Admin"), http.MethodPut, "profiler-configs/ascend-dp2/metric-enable", fmt.Sprintf(`{"value": %d}`, i%2))
			if res.status != 200 {
				t.Errorf("toggle %d: %d %s", i, res.status, res.raw)
			}
		}()
	}
	wg.Wait()
	var doc map[string]any
	if err := json.Unmarshal([]byte(readFile(t, p)), &doc); err != nil {
		t.Fatalf("file is not valid JSON after concurrent toggles: %v", err)
	}
	// Which toggle landed last is up to the scheduler; a final write makes the last value known.
	call(t, apps[0], user("Admin"), http.MethodPut, "profiler-configs/ascend-dp2/metric-enable", `{"value": 1}`)
	if got, want := readFile(t, p), strings.Replace(original, `"metric_enable": 0`, `"metric_enable": 1`, 1); got != want {
		t.Errorf("file:\n%s\nwant\n%s", got, want)
	}
}
