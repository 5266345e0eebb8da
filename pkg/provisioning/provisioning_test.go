package provisioning

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/inferscope/inferscope-vllm/pkg/app"
	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

type composeFile struct {
	Services map[string]struct {
		Extends *struct {
			File    string `yaml:"file"`
			Service string `yaml:"service"`
		} `yaml:"extends"`
		Build any    `yaml:"build"`
		Image string `yaml:"image"`
		// Environment accepts the map form only, which is all this repository uses.
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Command     []string          `yaml:"command"`
		DependsOn   dependsOn         `yaml:"depends_on"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// dependsOn reads both compose forms: a list of service names, or a map of names to conditions.
type dependsOn []string

func (d *dependsOn) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		*d = l
	case yaml.MappingNode:
		for i := 0; i < len(n.Content); i += 2 {
			*d = append(*d, n.Content[i].Value)
		}
	}
	return nil
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkMounts verifies that every bind mount's host path exists; dist/ only exists after a build.
func checkMounts(t *testing.T, file string, volumes []string, named map[string]any) {
	t.Helper()
	for _, v := range volumes {
		host, _, _ := strings.Cut(v, ":")
		if !strings.HasPrefix(host, ".") && !strings.HasPrefix(host, "/") {
			if _, ok := named[host]; !ok {
				t.Errorf("%s: volume %q is neither a path nor a declared named volume", file, host)
			}
			continue
		}
		p := filepath.Join(filepath.Dir(file), host)
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: mounted path %s does not exist (%v)", file, host, err)
		}
	}
}

func TestComposeFile(t *testing.T) {
	root := harness.RepoRoot(t)
	var c composeFile
	compose := filepath.Join(root, "docker-compose.yaml")
	readYAML(t, compose, &c)

	g, ok := c.Services["grafana"]
	if !ok || g.Extends == nil {
		t.Fatal("docker-compose.yaml needs a grafana service extending the scaffolded base")
	}
	base := filepath.Join(root, g.Extends.File)
	var b composeFile
	readYAML(t, base, &b)
	bg := b.Services[g.Extends.Service]
	checkMounts(t, base, bg.Volumes, nil)
	if !contains(bg.Volumes, "../dist:/var/lib/grafana/plugins/inferscope-vllm-app") {
		t.Errorf("grafana must mount dist/ as the app's plugin folder; volumes %v", bg.Volumes)
	}
	if !contains(bg.Volumes, "../provisioning:/etc/grafana/provisioning") {
		t.Errorf("grafana must mount provisioning/; volumes %v", bg.Volumes)
	}
	allowed := g.Environment["GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS"]
	for _, id := range []string{"inferscope-vllm-app", "inferscope-vllm-datasource"} {
		if !strings.Contains(allowed, id) {
			t.Errorf("GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS %q must list %s", allowed, id)
		}
	}

	for name, s := range c.Services {
		checkMounts(t, compose, s.Volumes, c.Volumes)
		for _, dep := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("service %s depends on unknown service %s", name, dep)
			}
		}
		if bm, ok := s.Build.(map[string]any); ok {
			if df, ok := bm["dockerfile"].(string); ok {
				if _, err := os.Stat(filepath.Join(root, df)); err != nil {
					t.Errorf("service %s: dockerfile %s does not exist", name, df)
				}
			}
		}
	}

	// Prometheus must scrape services that exist, on the ports they listen on.
	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, filepath.Join(root, "provisioning/prometheus/prometheus.yml"), &prom)
	targets := 0
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, tg := range st.Targets {
				targets++
				host, port, _ := strings.Cut(tg, ":")
				s, ok := c.Services[host]
				if !ok {
					t.Errorf("prometheus scrapes %s, which is not a compose service", tg)
					continue
				}
				if !contains(s.Command, "-addr=:"+port) {
					t.Errorf("prometheus scrapes %s but the service's command %v does not listen on :%s", tg, s.Command, port)
				}
			}
		}
	}
	if targets == 0 {
		t.Error("prometheus.yml scrapes nothing")
	}
	// Every rule file Prometheus loads is mounted there from the repository (the recording rules panels read).
	for _, rf := range prom.RuleFiles {
		if !slices.ContainsFunc(c.Services["prometheus"].Volumes, func(v string) bool { return strings.HasSuffix(v, ":"+rf+":ro") }) {
			t.Errorf("prometheus.yml loads %s, which the prometheus service does not mount", rf)
		}
	}
	if !slices.Contains(prom.RuleFiles, "/etc/prometheus/inferscope-recording-rules.yaml") {
		t.Error("the compose Prometheus does not load InferScope's recording rules")
	}
}

func TestProvisioningReferences(t *testing.T) {
	root := harness.RepoRoot(t)
	var apps struct {
		Apps []struct {
			Type     string `yaml:"type"`
			Disabled bool   `yaml:"disabled"`
			JSONData struct {
				Agents []app.AgentConfig `yaml:"agents"`
			} `yaml:"jsonData"`
			SecureJSONData map[string]string `yaml:"secureJsonData"`
		} `yaml:"apps"`
	}
	readYAML(t, filepath.Join(root, "provisioning/plugins/apps.yaml"), &apps)
	if len(apps.Apps) != 1 || apps.Apps[0].Type != "inferscope-vllm-app" || apps.Apps[0].Disabled {
		t.Errorf("apps.yaml must enable inferscope-vllm-app, got %+v", apps.Apps)
	}
	// Each provisioned agent is a compose service, and the app gets its token.
	for _, a := range apps.Apps[0].JSONData.Agents {
		host := regexp.MustCompile(`^https?://([^:/]+)`).FindStringSubmatch(a.URL)
		var c composeFile
		readYAML(t, filepath.Join(root, "docker-compose.yaml"), &c)
		if host == nil {
			t.Errorf("apps.yaml: agent %s: %q is not a URL", a.Name, a.URL)
		} else if _, ok := c.Services[host[1]]; !ok {
			t.Errorf("apps.yaml: agent %s: host %s is not a compose service", a.Name, host[1])
		}
		if apps.Apps[0].SecureJSONData[app.AgentTokenField(a.Name)] == "" {
			t.Errorf("apps.yaml: agent %s has no token in secureJsonData", a.Name)
		}
	}

	var ds struct {
		Datasources []struct {
			UID      string         `yaml:"uid"`
			Type     string         `yaml:"type"`
			URL      string         `yaml:"url"`
			JSONData map[string]any `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(root, "provisioning/datasources/datasources.yaml"), &ds)
	uids := map[string]bool{}
	var c composeFile
	readYAML(t, filepath.Join(root, "docker-compose.yaml"), &c)
	for _, d := range ds.Datasources {
		if d.UID == "" || uids[d.UID] {
			t.Errorf("data source uid %q is empty or repeated", d.UID)
		}
		uids[d.UID] = true
		if d.Type != "inferscope-vllm-datasource" {
			t.Errorf("data source %s has type %s", d.UID, d.Type)
		}
		eps, _ := d.JSONData["endpoints"].([]any)
		for _, e := range eps {
			u, _ := e.(map[string]any)["url"].(string)
			host := regexp.MustCompile(`^https?://([^:/]+)`).FindStringSubmatch(u)
			if host == nil {
				t.Errorf("data source %s: endpoint %q is not a URL", d.UID, u)
			} else if _, ok := c.Services[host[1]]; !ok {
				t.Errorf("data source %s: endpoint host %s is not a compose service", d.UID, host[1])
			}
		}
	}

	// Alert rules query provisioned data sources (or Grafana's expressions) only.
	var alerts struct {
		Groups []struct {
			Rules []struct {
				UID       string `yaml:"uid"`
				Condition string `yaml:"condition"`
				Data      []struct {
					RefID         string `yaml:"refId"`
					DatasourceUID string `yaml:"datasourceUid"`
				} `yaml:"data"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	readYAML(t, filepath.Join(root, "provisioning/alerting/inferscope-rules.yaml"), &alerts)
	rules := 0
	for _, g := range alerts.Groups {
		for _, r := range g.Rules {
			rules++
			refs := map[string]bool{}
			for _, d := range r.Data {
				refs[d.RefID] = true
				if d.DatasourceUID != "__expr__" && !uids[d.DatasourceUID] {
					t.Errorf("alert rule %s queries data source uid %q, which is not provisioned", r.UID, d.DatasourceUID)
				}
			}
			if !refs[r.Condition] {
				t.Errorf("alert rule %s: condition %q is not one of its queries", r.UID, r.Condition)
			}
		}
	}
	if rules == 0 {
		t.Error("no alert rules provisioned")
	}

	// Every data source a dashboard names is either its data-source variable or a provisioned uid.
	dashboards, _ := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
	if len(dashboards) == 0 {
		t.Fatal("no dashboards")
	}
	for _, f := range dashboards {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d any
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walkDatasources(d, func(typ, uid string) {
			if typ != "inferscope-vllm-datasource" && typ != "" && typ != "__expr__" {
				t.Errorf("%s: names data source type %q", filepath.Base(f), typ)
			}
			if !strings.HasPrefix(uid, "$") && !uids[uid] {
				t.Errorf("%s: names data source uid %q, which is not provisioned", filepath.Base(f), uid)
			}
		})
	}
}

func walkDatasources(v any, fn func(typ, uid string)) {
	switch x := v.(type) {
	case map[string]any:
		if d, ok := x["datasource"].(map[string]any); ok {
			typ, _ := d["type"].(string)
			uid, _ := d["uid"].(string)
			fn(typ, uid)
		}
		for _, c := range x {
			walkDatasources(c, fn)
		}
	case []any:
		for _, c := range x {
			walkDatasources(c, fn)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestShippedDashboardsAreNotEditable: dashboards a plugin ships are replaced on every upgrade, so they are
// marked editable: false (Grafana's dashboard linter's uneditable-dashboard rule); users save a copy to change one.
func TestShippedDashboardsAreNotEditable(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(harness.RepoRoot(t), "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Editable *bool `json:"editable"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if d.Editable == nil || *d.Editable {
			t.Errorf("%s: editable must be false", filepath.Base(f))
		}
	}
}

// TestLicenseIsComplete: the plugin catalog's license check refuses the Apache template's placeholders.
func TestLicenseIsComplete(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "{yyyy}") || strings.Contains(string(b), "{name of copyright owner}") {
		t.Error("LICENSE still holds the template's placeholders")
	}
}

// TestReadmePackageListMatchesTree keeps the README's layout block true: every Go package under pkg/ is named
// there with a sentence, and every pkg/ path it names exists.
func TestReadmePackageListMatchesTree(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "pkg/") {
			continue
		}
		names, desc, ok := strings.Cut(line, "  ")
		if !ok || strings.TrimSpace(desc) == "" {
			t.Errorf("README layout line without a description: %q", line)
		}
		for _, n := range strings.Split(names, ",") {
			listed[strings.TrimSpace(n)] = true
		}
	}
	tree := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		tree["pkg/"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../")))] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range tree {
		if !listed[p] {
			t.Errorf("%s is not in the README's package list", p)
		}
	}
	for p := range listed {
		if !tree[p] {
			t.Errorf("the README lists %s, which holds no Go package", p)
		}
	}
}

// dashboardLinterVersion is the vendored linter's version (third_party/dashboard-linter); the built binary is
// cached under that name.
const dashboardLinterVersion = "v0.1.0"

// TestShippedDashboardsPassTheLinter runs Grafana's dashboard linter in --strict mode (warnings fail too) on every
// shipped dashboard, as the plugin catalog does. The linter is built once from the vendored source into the user
// cache directory; outside CI a failed build skips the test, in CI it fails it.
func TestShippedDashboardsPassTheLinter(t *testing.T) {
	bin := buildDashboardLinter(t)
	files, err := filepath.Glob("../../dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, err := exec.Command(bin, "lint", "--strict", f).CombinedOutput()
			if err != nil {
				t.Errorf("dashboard-linter --strict failed: %v\n%s", err, out)
			}
		})
	}
	// The linter must catch what it is here for: an editable dashboard and a panel without a description.
	bad := filepath.Join(t.TempDir(), "bad.json")
	b, _ := os.ReadFile(files[0])
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	d["editable"] = true
	b, _ = json.Marshal(d)
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "lint", "--strict", bad).CombinedOutput(); err == nil || !strings.Contains(string(out), "editable") {
		t.Errorf("the linter passed an editable dashboard:\n%s", out)
	}
}

func buildDashboardLinter(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(cache, "inferscope-bin", "dashboard-linter-"+dashboardLinterVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	src, err := filepath.Abs("../../third_party/dashboard-linter")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := "building the dashboard linter: " + err.Error() + "\n" + string(out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}
