package harness

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestAppExecutable(t *testing.T) {
	p := Start(t, Executable(t, AppExecutable))
	pc := AppContext(t, map[string]any{}, nil, User("Admin"))

	health, err := p.CheckHealth(ctx(t), pc)
	if err != nil {
		t.Fatal(err)
	}
	if health.Status != backend.HealthStatusOk || !strings.Contains(health.Message, "0.1.0") {
		t.Fatalf("health = %v %q, want OK naming version 0.1.0 (stamped from package.json by the build)", health.Status, health.Message)
	}

	res, err := p.CallResource(ctx(t), pc, http.MethodGet, "status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var status map[string]string
	if err := json.Unmarshal(res.Body, &status); err != nil || res.Status != http.StatusOK {
		t.Fatalf("GET status = %d %s (%v)", res.Status, res.Body, err)
	}
	if status["pluginId"] != "inferscope-vllm-app" || status["version"] != "0.1.0" {
		t.Fatalf("status = %v", status)
	}

	res, err = p.CallResource(ctx(t), pc, http.MethodGet, "no-such-route", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusNotFound || !strings.Contains(string(res.Body), "no such resource") {
		t.Fatalf("unknown route = %d %s, want 404 with a message", res.Status, res.Body)
	}

	stopCleanly(t, p)
}

func TestDatasourceExecutable(t *testing.T) {
	p := Start(t, Executable(t, DatasourceExecutable))
	pc := DataSourceContext(t, DataSource{
		JSONData: map[string]any{
			"mode": "direct",
			"endpoints": []map[string]string{
				{"url": "http://127.0.0.1:1/metrics", "name": "engine-a"},
				{"url": "http://scraper:s3cret@127.0.0.1:2/metrics"},
			},
		},
		Secure: map[string]string{"bearerToken": "tok-never-shown"},
	}, User("Viewer"))

	t.Run("health names unreachable endpoints", func(t *testing.T) {
		health, err := p.CheckHealth(ctx(t), pc)
		if err != nil {
			t.Fatal(err)
		}
		if health.Status != backend.HealthStatusError || !strings.Contains(health.Message, "0 of 2 endpoint(s) reachable") ||
			!strings.Contains(health.Message, "engine-a: scrape http://127.0.0.1:1/metrics") || !strings.Contains(health.Message, "connection refused") {
			t.Fatalf("health = %v %q", health.Status, health.Message)
		}
		if strings.Contains(health.Message, "s3cret") {
			t.Fatalf("password in health message: %q", health.Message)
		}
	})

	t.Run("queries answer per query", func(t *testing.T) {
		resp, err := p.QueryData(ctx(t), t, pc,
			Query{RefID: "A", JSON: map[string]any{"queryType": "kv_cache_usage"}},
			Query{RefID: "B", JSON: []byte(`{"queryType": `)},
			Query{RefID: "C", JSON: map[string]any{"queryType": "latency", "quantiles": []float64{7}}},
		)
		if err != nil {
			t.Fatal(err)
		}
		a := resp.Responses["A"]
		if a.Error != nil || len(a.Frames) == 0 || a.Frames[0].Meta == nil {
			t.Fatalf("A = %v %v", a.Status, a.Error)
		}
		var notices []string
		for _, n := range a.Frames[0].Meta.Notices {
			notices = append(notices, n.Text)
		}
		if all := strings.Join(notices, "\n"); !strings.Contains(all, "endpoint engine-a") || !strings.Contains(all, "endpoint 127.0.0.1:2") {
			t.Fatalf("A's notices do not name the unreachable endpoints: %q", all)
		}
		if r := resp.Responses["B"]; r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "query JSON is invalid") {
			t.Fatalf("B = %v %v", r.Status, r.Error)
		}
		if r := resp.Responses["C"]; r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "quantile 7 is outside") {
			t.Fatalf("C = %v %v", r.Status, r.Error)
		}
	})

	t.Run("endpoints resource redacts credentials", func(t *testing.T) {
		res, err := p.CallResource(ctx(t), pc, http.MethodGet, "endpoints", nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != http.StatusOK {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		var eps []struct{ Name, URL string }
		if err := json.Unmarshal(res.Body, &eps); err != nil {
			t.Fatal(err)
		}
		if len(eps) != 2 || eps[0].Name != "engine-a" || eps[1].Name != "127.0.0.1:2" || !strings.Contains(eps[1].URL, "xxxxx@127.0.0.1:2") {
			t.Fatalf("endpoints = %+v", eps)
		}
		if strings.Contains(string(res.Body), "s3cret") || strings.Contains(string(res.Body), "tok-never-shown") {
			t.Fatalf("secret leaked: %s", res.Body)
		}
	})

	t.Run("streams", func(t *testing.T) {
		sub, err := p.SubscribeStream(ctx(t), pc, "unknown/path", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if sub.Status != pluginv2.SubscribeStreamResponse_NOT_FOUND {
			t.Fatalf("subscribe status = %v, want NOT_FOUND", sub.Status)
		}
		pub, err := p.Stream.PublishStream(ctx(t), &pluginv2.PublishStreamRequest{PluginContext: pc, Path: "x", Data: []byte("{}")})
		if err != nil {
			t.Fatal(err)
		}
		if pub.Status != pluginv2.PublishStreamResponse_PERMISSION_DENIED {
			t.Fatalf("publish status = %v", pub.Status)
		}
	})

	t.Run("new settings build a new instance", func(t *testing.T) {
		broken := DataSourceContext(t, DataSource{
			JSONData: map[string]any{"mode": "direct", "endpoints": []map[string]string{{"url": "not a url"}}},
			Updated:  time.Unix(1800000000, 0),
		}, nil)
		health, err := p.CheckHealth(ctx(t), broken)
		if err != nil {
			t.Fatal(err)
		}
		if health.Status != backend.HealthStatusError || !strings.Contains(health.Message, `"not a url" is not an http(s) URL`) {
			t.Fatalf("health = %v %q", health.Status, health.Message)
		}
		resp, err := p.QueryData(ctx(t), t, broken, Query{RefID: "A", JSON: map[string]any{"queryType": "queue"}})
		if err != nil {
			t.Fatal(err)
		}
		if r := resp.Responses["A"]; r.Status != backend.StatusBadRequest || !strings.Contains(r.Error.Error(), "configuration") {
			t.Fatalf("query on broken settings = %v %v", r.Status, r.Error)
		}
	})

	if strings.Contains(p.Logs(), "tok-never-shown") {
		t.Fatal("secure data appeared in the plugin log")
	}
	stopCleanly(t, p)
}

func stopCleanly(t *testing.T, p *Plugin) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() {
		t.Fatal("plugin process still alive after Stop")
	}
}
