package provisioning

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/promtest"
)

// composeService is what the thanos profile's check reads of a compose service.
type composeService struct {
	Profiles    []string          `yaml:"profiles"`
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	DependsOn   dependsOn         `yaml:"depends_on"`
}

// flagValue returns the value of --name=value in a command, and whether it is there.
func flagValue(cmd []string, name string) (string, bool) {
	for _, a := range cmd {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// flags returns every value of a repeated --name=value.
func flags(cmd []string, name string) []string {
	var out []string
	for _, a := range cmd {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// mountAt returns the named volume or host path a service mounts at the container path, or "".
func mountAt(s composeService, path string) string {
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == path {
			return parts[0]
		}
	}
	return ""
}

// port is the port of a listen address (0.0.0.0:10901, :9090) or host:port.
func port(addr string) string {
	_, p, _ := strings.Cut(addr, ":")
	return p
}

// TestComposeThanosProfile checks docker-compose.yaml's optional thanos profile, which cannot run here (no Docker),
// so that it cannot rot: images pinned (Thanos at the release the tests run), Thanos Query's endpoints are the
// profile's sidecars on their gRPC ports, each sidecar reads a Prometheus of the profile on its port and its TSDB
// through the same volume, the replica label Thanos Query deduplicates is the external label the pair sets to
// distinct values, every rule file prometheus.yml loads is mounted into every Prometheus that reads it, published
// ports are distinct, and the provisioned "vLLM (Thanos)" data source points at Thanos Query's HTTP port with the
// pair's scrape interval.
func TestComposeThanosProfile(t *testing.T) {
	root := harness.RepoRoot(t)
	var c struct {
		Services map[string]composeService `yaml:"services"`
		Volumes  map[string]any            `yaml:"volumes"`
	}
	readYAML(t, filepath.Join(root, "docker-compose.yaml"), &c)
	var prom struct {
		Global struct {
			ScrapeInterval string            `yaml:"scrape_interval"`
			ExternalLabels map[string]string `yaml:"external_labels"`
		} `yaml:"global"`
		RuleFiles []string `yaml:"rule_files"`
	}
	readYAML(t, filepath.Join(root, "provisioning/prometheus/prometheus.yml"), &prom)
	const promConfig = "./provisioning/prometheus/prometheus.yml"

	profile := map[string]composeService{}
	proms, sidecars, queriers := map[string]composeService{}, map[string]composeService{}, map[string]composeService{}
	for name, s := range c.Services {
		if !slices.Contains(s.Profiles, "thanos") {
			continue
		}
		profile[name] = s
		switch {
		case strings.HasPrefix(s.Image, "prom/prometheus:"):
			proms[name] = s
		case strings.HasPrefix(s.Image, "quay.io/thanos/thanos:") && len(s.Command) > 0 && s.Command[0] == "sidecar":
			sidecars[name] = s
		case strings.HasPrefix(s.Image, "quay.io/thanos/thanos:") && len(s.Command) > 0 && s.Command[0] == "query":
			queriers[name] = s
		default:
			t.Errorf("thanos profile: service %s (image %q, command %q) is none of Prometheus, a sidecar, Thanos Query", name, s.Image, s.Command)
		}
	}
	if len(proms) < 2 || len(sidecars) != len(proms) || len(queriers) != 1 {
		t.Fatalf("thanos profile: %d Prometheus, %d sidecars, %d Thanos Query; want an HA pair (or more), a sidecar each and one querier",
			len(proms), len(sidecars), len(queriers))
	}

	for name, s := range profile {
		if s.Build != nil {
			t.Errorf("%s: builds an image; the profile runs released images only", name)
		}
		img, tag, _ := strings.Cut(s.Image, ":")
		switch {
		case tag == "" || tag == "latest":
			t.Errorf("%s: image %q is not pinned to a release", name, s.Image)
		case img == "quay.io/thanos/thanos" && tag != promtest.ThanosVersion:
			t.Errorf("%s: Thanos %s, but the tests run Thanos %s (promtest.ThanosVersion)", name, tag, promtest.ThanosVersion)
		case img == "prom/prometheus" && s.Image != c.Services["prometheus"].Image:
			t.Errorf("%s: %s, but the stack's own Prometheus is %s", name, s.Image, c.Services["prometheus"].Image)
		}
		for _, dep := range s.DependsOn {
			if d, ok := c.Services[dep]; ok && len(d.Profiles) > 0 && !slices.Contains(d.Profiles, "thanos") {
				t.Errorf("%s depends on %s, which the thanos profile does not start", name, dep)
			}
		}
	}

	// The pair: distinct values of the replica label, expanded from the environment into prometheus.yml's external labels.
	var query composeService
	var queryName string
	for n, q := range queriers {
		query, queryName = q, n
	}
	replica, ok := flagValue(query.Command, "query.replica-label")
	if !ok {
		t.Errorf("%s does not deduplicate: no --query.replica-label", queryName)
	}
	ref := regexp.MustCompile(`^\$\{(\w+)\}$`).FindStringSubmatch(prom.Global.ExternalLabels[replica])
	if ref == nil {
		t.Fatalf("prometheus.yml's external label %q is %q, not ${VAR} expanded per replica", replica, prom.Global.ExternalLabels[replica])
	}
	values, tsdbs := map[string]string{}, map[string]string{}
	for name, s := range proms {
		data, _ := flagValue(s.Command, "storage.tsdb.path")
		vol := mountAt(s, data)
		if vol == "" {
			t.Errorf("%s keeps its TSDB (%q) on no volume: its sidecar cannot read it", name, data)
		} else if other, dup := tsdbs[vol]; dup {
			t.Errorf("%s and %s both keep their TSDB on %s", name, other, vol)
		}
		tsdbs[vol] = name
		if mountAt(s, "/etc/prometheus/prometheus.yml") != promConfig {
			t.Errorf("%s does not read %s", name, promConfig)
		}
		if !slices.Contains(flags(s.Command, "enable-feature"), "expand-external-labels") {
			t.Errorf("%s: %s=${%s} needs --enable-feature=expand-external-labels", name, replica, ref[1])
		}
		v := s.Environment[ref[1]]
		if v == "" {
			t.Errorf("%s: %s is empty: its series would carry no %s label", name, ref[1], replica)
		} else if other, dup := values[v]; dup {
			t.Errorf("%s and %s are both %s=%q: Thanos Query cannot tell them apart", name, other, replica, v)
		}
		values[v] = name
	}
	// Every Prometheus reading prometheus.yml, the profile's and the stack's own, has the rule files it loads.
	for name, s := range c.Services {
		if mountAt(s, "/etc/prometheus/prometheus.yml") != promConfig {
			continue
		}
		for _, rf := range prom.RuleFiles {
			if mountAt(s, rf) == "" {
				t.Errorf("%s: prometheus.yml loads %s, which the service does not mount", name, rf)
			}
		}
	}

	// Sidecars: one per Prometheus, reading its API and its TSDB through the same volume.
	served := map[string]string{}
	for name, s := range sidecars {
		u, err := url.Parse(func() string { v, _ := flagValue(s.Command, "prometheus.url"); return v }())
		if err != nil || u.Host == "" {
			t.Errorf("%s: --prometheus.url is not a URL (%v)", name, err)
			continue
		}
		p, ok := proms[u.Hostname()]
		if !ok {
			t.Errorf("%s reads %s, which is not a Prometheus of the profile", name, u.Hostname())
			continue
		}
		listen, ok := flagValue(p.Command, "web.listen-address")
		if !ok {
			listen = ":9090"
		}
		if u.Port() != port(listen) {
			t.Errorf("%s reads %s on port %s; it listens on %s", name, u.Hostname(), u.Port(), port(listen))
		}
		if other, dup := served[u.Hostname()]; dup {
			t.Errorf("%s and %s are both %s's sidecar", name, other, u.Hostname())
		}
		served[u.Hostname()] = name
		tsdb, _ := flagValue(s.Command, "tsdb.path")
		data, _ := flagValue(p.Command, "storage.tsdb.path")
		if vol := mountAt(s, tsdb); vol == "" || vol != mountAt(p, data) {
			t.Errorf("%s reads the TSDB at %s from %q; %s writes it at %s to %q", name, tsdb, vol, u.Hostname(), data, mountAt(p, data))
		}
	}

	// Thanos Query: its endpoints are exactly the sidecars, on their gRPC ports.
	var want, got []string
	for name, s := range sidecars {
		grpc, _ := flagValue(s.Command, "grpc-address")
		want = append(want, name+":"+port(grpc))
	}
	got = flags(query.Command, "endpoint")
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s's endpoints %q, want the sidecars' gRPC addresses %q", queryName, got, want)
	}

	// Published ports are distinct, and Thanos Query's HTTP port is one of them.
	published := map[string]string{}
	for name, s := range c.Services {
		for _, p := range s.Ports {
			host, _, _ := strings.Cut(p, ":")
			if other, dup := published[host]; dup {
				t.Errorf("%s and %s both publish host port %s", name, other, host)
			}
			published[host] = name
		}
	}
	httpAddr, _ := flagValue(query.Command, "http-address")
	queryURL := fmt.Sprintf("http://%s:%s", queryName, port(httpAddr))

	var ds struct {
		Datasources []struct {
			Name     string         `yaml:"name"`
			URL      string         `yaml:"url"`
			JSONData map[string]any `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(root, "provisioning/datasources/datasources.yaml"), &ds)
	found := false
	for _, d := range ds.Datasources {
		if d.URL != queryURL {
			continue
		}
		found = true
		if d.JSONData["mode"] != "prometheus" || d.JSONData["scrapeInterval"] != prom.Global.ScrapeInterval {
			t.Errorf("data source %q: mode %v, scrapeInterval %v; want prometheus and the pair's %s", d.Name, d.JSONData["mode"], d.JSONData["scrapeInterval"], prom.Global.ScrapeInterval)
		}
	}
	if !found {
		t.Errorf("no provisioned data source points at Thanos Query (%s)", queryURL)
	}
}
