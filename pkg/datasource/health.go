package datasource

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"

	"github.com/inferscope/inferscope-vllm/pkg/discovery"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// HealthStatus is a health check's outcome.
type HealthStatus string

// Health check outcomes.
const (
	HealthOK    HealthStatus = "ok"
	HealthError HealthStatus = "error"
)

// Health is one health check's result in either mode: what Save & test shows (Message) and what its details carry
// for the config editor (the same struct as JSON).
type Health struct {
	Status HealthStatus `json:"status"`
	// Server names the Prometheus-compatible server and its version; empty in direct mode.
	Server string `json:"server,omitempty"`
	// Endpoints are the configured endpoints (direct mode) or the instances the server holds vLLM series of.
	Endpoints []EndpointHealth `json:"endpoints"`
	// Warnings are the server's warnings, and what was left out of the check.
	Warnings []string `json:"warnings,omitempty"`
	// Problem is why the check failed before any endpoint could be looked at.
	Problem string `json:"problem,omitempty"`
	// Discovery is what each discovery source found in the check (direct mode with sources).
	Discovery []discovery.Report `json:"discovery,omitempty"`
}

// EndpointHealth is one endpoint's state: up with what it runs, or down with the error.
type EndpointHealth struct {
	Name      string          `json:"name"`
	URL       string          `json:"url,omitempty"`
	Up        bool            `json:"up"`
	Error     string          `json:"error,omitempty"`
	Detection *vllm.Detection `json:"detection,omitempty"`
	// Version is the vLLM release the endpoint's /version answered (direct mode, vLLM's API server only).
	Version string `json:"version,omitempty"`
	// LastScrape and Samples are direct mode's: when the endpoint was last scraped and how many samples it kept.
	LastScrape *time.Time `json:"lastScrape,omitempty"`
	Samples    int        `json:"samples,omitempty"`
	// Gone says discovery no longer lists the endpoint (since GoneSince): not scraped, not down, history kept.
	Gone      bool       `json:"gone,omitempty"`
	GoneSince *time.Time `json:"goneSince,omitempty"`
	// Source is the discovery source that found the endpoint; Role and Model what its labels say.
	Source string `json:"source,omitempty"`
	Role   string `json:"role,omitempty"`
	Model  string `json:"model,omitempty"`
}

// maxHealthLines bounds the per-endpoint lines of a health message, which Grafana shows in one banner;
// maxHealthDetails the endpoints its details list.
const (
	maxHealthLines   = 20
	maxHealthDetails = 1000
)

// Message is the one-banner summary: how many endpoints answered, the engines and flavors seen, then each
// endpoint's line (at most maxHealthLines of each kind).
func (h Health) Message() string {
	if h.Problem != "" {
		return h.Problem
	}
	var up, down []string
	flavors := map[vllm.Flavor]int{}
	engines, gone := 0, 0
	for _, e := range h.Endpoints {
		if e.Gone {
			gone++
			continue
		}
		if !e.Up {
			down = append(down, e.Name+": "+e.Error)
			continue
		}
		up = append(up, e.line())
		if e.Detection != nil {
			flavors[e.Detection.Flavor]++
			engines += max(len(e.Detection.Ranks), 1)
		}
	}
	var b strings.Builder
	if h.Server != "" {
		b.WriteString(h.Server + ": ")
	}
	fmt.Fprintf(&b, "%d of %d endpoint(s) reachable", len(up), len(h.Endpoints)-gone)
	if gone > 0 {
		fmt.Fprintf(&b, " (%d gone from discovery)", gone)
	}
	if len(flavors) > 0 {
		fl := make([]string, 0, len(flavors))
		for f, n := range flavors {
			fl = append(fl, fmt.Sprintf("%s ×%d", f, n))
		}
		sort.Strings(fl)
		fmt.Fprintf(&b, ", %d engine(s) / DP rank(s) seen; flavors %s", engines, strings.Join(fl, ", "))
	}
	if len(up) > 0 {
		b.WriteString(". " + healthList(up))
	}
	if len(down) > 0 {
		b.WriteString(". Failed: " + healthList(down))
	}
	if len(h.Discovery) > 0 {
		var found []string
		for _, r := range h.Discovery {
			line := fmt.Sprintf("%s found %d target(s), %d kept", r.Source, r.Found, r.Kept)
			if r.Error != "" {
				line = fmt.Sprintf("%s failed: %s", r.Source, r.Error)
			}
			found = append(found, line)
		}
		b.WriteString(". Discovery: " + healthList(found))
	}
	if len(h.Warnings) > 0 {
		b.WriteString(". Warnings: " + strings.Join(h.Warnings, "; "))
	}
	return b.String()
}

// line is an up endpoint's summary: flavor, ranks and what is switched on.
func (e EndpointHealth) line() string {
	if e.Detection == nil {
		return e.Name
	}
	det := e.Detection
	line := fmt.Sprintf("%s: %s", e.Name, det.Flavor)
	if len(det.Ranks) > 0 {
		line += fmt.Sprintf(", %d %s rank(s)", len(det.Ranks), det.RankLabel)
	}
	if det.SpecDecode {
		line += ", speculative decoding on"
	}
	if det.AscendProfiler {
		line += ", Ascend profiler metrics on"
	}
	if det.DeprecatedNames {
		line += ", deprecated metric names present"
	}
	if e.Version != "" {
		line += ", vLLM " + e.Version
	}
	if e.Role != "" {
		line += fmt.Sprintf(", role %s (label, %s)", e.Role, e.Source)
	}
	return line
}

// healthList joins per-endpoint lines for a health message, naming at most maxHealthLines of them.
func healthList(lines []string) string {
	if len(lines) <= maxHealthLines {
		return strings.Join(lines, "; ")
	}
	return strings.Join(lines[:maxHealthLines], "; ") + fmt.Sprintf("; … and %d more", len(lines)-maxHealthLines)
}

// Result is the health check as Grafana takes it: the message, and the struct as details for the config editor.
func (h Health) Result() *backend.CheckHealthResult {
	msg := h.Message() // before the details are cut
	status := backend.HealthStatusOk
	if h.Status != HealthOK {
		status = backend.HealthStatusError
	}
	if n := len(h.Endpoints); n > maxHealthDetails {
		h.Endpoints = h.Endpoints[:maxHealthDetails]
		h.Warnings = append(h.Warnings[:len(h.Warnings):len(h.Warnings)], fmt.Sprintf("details list the first %d of %d endpoints", maxHealthDetails, n))
	}
	details, _ := json.Marshal(h)
	return &backend.CheckHealthResult{Status: status, Message: msg, JSONDetails: details}
}
