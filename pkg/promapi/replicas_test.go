package promapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// TestReplicaLabels runs the check on a real Prometheus 3: series that differ only by a replica-like label are
// found (and named), series split by any other label (engine, here) or carrying a replica label of one value are not.
func TestReplicaLabels(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Minute)
	// Each series is written under two names: families with the same labels are not copies of each other.
	om := func(series ...string) string {
		var b strings.Builder
		for _, name := range []string{"vllm:num_requests_running", "vllm:num_requests_waiting"} {
			fmt.Fprintf(&b, "# TYPE %s gauge\n", name)
			for _, s := range series {
				for i := 0; i <= 12; i++ {
					fmt.Fprintf(&b, "%s{%s} %d %d\n", name, s, i, base.Add(time.Duration(i)*5*time.Second).Unix())
				}
			}
		}
		b.WriteString("# EOF\n")
		return b.String()
	}
	at := base.Add(time.Minute)
	for _, tc := range []struct {
		name   string
		series []string
		want   []string
	}{
		{"HA pair", []string{`instance="e0",engine="0",replica="a"`, `instance="e0",engine="0",replica="b"`}, []string{"replica"}},
		{"Prometheus-operator pair", []string{`instance="e0",prometheus_replica="prometheus-k8s-0"`, `instance="e0",prometheus_replica="prometheus-k8s-1"`}, []string{"prometheus_replica"}},
		{"deduplicated", []string{`instance="e0",engine="0",replica="a"`, `instance="e0",engine="1",replica="a"`}, nil},
		{"engines", []string{`instance="e0",engine="0"`, `instance="e0",engine="1"`}, nil},
		{"one series with a replica label", []string{`instance="e0",replica="a"`}, nil},
		{"Ray Serve replicas", []string{`instance="e0",ReplicaId="r0"`, `instance="e0",ReplicaId="r1"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := promtest.EnginesOf(t, promtest.Prometheus3)[0]
			srv := promtest.Start(t, promtest.Options{Engine: eng, OpenMetrics: om(tc.series...)})
			c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: 20 * time.Second}}
			got, err := c.ReplicaLabels(context.Background(), at)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("replica labels %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNoTenant: a multi-tenant store's 401 "no org id" (Cortex's and Mimir's body) becomes the X-Scope-OrgID hint;
// other 401s keep the credentials hint, and no header value is echoed.
func TestNoTenant(t *testing.T) {
	const secret = "tenant-secret-42"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			http.Error(w, "bad token "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		http.Error(w, "no org id", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	scrub := redact.NewScrubber(secret)
	c := &Client{BaseURL: srv.URL, HTTP: srv.Client(), Scrub: scrub}
	_, _, err := c.Query(context.Background(), "up", time.Now())
	if err == nil || !strings.Contains(err.Error(), NoTenantMessage) {
		t.Errorf("error %v, want %q", err, NoTenantMessage)
	}
	hc := &http.Client{Transport: headerTransport{"Authorization", "Bearer " + secret}}
	c = &Client{BaseURL: srv.URL, HTTP: hc, Scrub: scrub}
	_, _, err = c.Query(context.Background(), "up", time.Now())
	if err == nil || strings.Contains(err.Error(), "X-Scope-OrgID") || strings.Contains(err.Error(), secret) {
		t.Errorf("error %v: want the credentials hint without the token", err)
	}
}

type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}
