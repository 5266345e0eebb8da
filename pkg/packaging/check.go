package packaging

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Problem is one finding, named after the plugin validator analyzer that would report it.
type Problem struct {
	Rule    string
	Message string
}

func (p Problem) String() string { return p.Rule + ": " + p.Message }

// Platforms are the os_arch suffixes every backend executable must be built for.
var Platforms = []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64.exe"}

var (
	idPattern          = regexp.MustCompile(`^[0-9a-z]+\-([0-9a-z]+\-)?(app|panel|datasource)$`)
	templateReadme     = regexp.MustCompile(`(?i)Grafana (Panel|Data Source|Datasource|App|Data Source Backend) Plugin Template`)
	grafanaDepPattern  = regexp.MustCompile(`^(>=|\^|~)?\d+\.\d+\.\d+(-0)?$`)
	knownLicenseMarker = []string{"Apache License", "MIT License", "BSD", "GNU LESSER GENERAL PUBLIC LICENSE", "GNU GENERAL PUBLIC LICENSE", "GNU AFFERO"}
)

// pluginJSON holds the plugin.json fields the checks read.
type pluginJSON struct {
	ID         string `json:"id"`
	Type       string `json:"type"`
	Name       string `json:"name"`
	Backend    bool   `json:"backend"`
	Executable string `json:"executable"`
	Alerting   bool   `json:"alerting"`
	Info       struct {
		Version string `json:"version"`
		Logos   struct {
			Small string `json:"small"`
			Large string `json:"large"`
		} `json:"logos"`
		Screenshots []struct {
			Path string `json:"path"`
		} `json:"screenshots"`
		Links []struct {
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"links"`
	} `json:"info"`
	Includes []struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Path string `json:"path"`
	} `json:"includes"`
	Dependencies struct {
		GrafanaDependency string `json:"grafanaDependency"`
	} `json:"dependencies"`
}

type checker struct {
	a        Archive
	root     string
	problems []Problem
}

func (c *checker) addf(rule, format string, args ...any) {
	c.problems = append(c.problems, Problem{Rule: rule, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) file(rel string) (File, bool) {
	f, ok := c.a[path.Join(c.root, rel)]
	return f, ok
}

// Check inspects an archive as the plugin validator would offline. sourceRoot is the repository the archive was
// built from (its package.json and Go sources); pass "" to skip the source-based checks.
func Check(a Archive, sourceRoot string) []Problem {
	c := &checker{a: a}
	tops := a.topDirs()
	if len(tops) != 1 {
		c.addf("archive", "archive must hold exactly one top-level folder, found %d: %v", len(tops), tops)
		return c.problems
	}
	c.root = tops[0]

	rootJSON, ok := c.plugin("plugin.json")
	if !ok {
		return c.problems
	}
	if c.root != rootJSON.ID {
		c.addf("archivename", "top-level folder %q must be named after the plugin id %q", c.root, rootJSON.ID)
	}
	c.checkPlugin("plugin.json", rootJSON)

	nested := c.nestedPluginJSONs()
	for _, rel := range nested {
		p, ok := c.plugin(rel)
		if !ok {
			continue
		}
		c.checkPlugin(rel, p)
		c.checkIncluded(rootJSON, rel, p)
		if p.Info.Version != rootJSON.Info.Version {
			c.addf("version", "%s version %q differs from the app's %q", rel, p.Info.Version, rootJSON.Info.Version)
		}
	}
	c.checkIncludes(rootJSON)
	c.checkDocs()
	for _, name := range []string{"standalone.txt", "pid.txt"} {
		for n := range a {
			if path.Base(n) == name {
				c.addf("backenddebug", "debug leftover %s must not be shipped", n)
			}
		}
	}
	if sourceRoot != "" {
		c.checkPackageJSON(sourceRoot, rootJSON)
		if rootJSON.Backend {
			c.checkGoManifest(sourceRoot)
		}
	}
	return c.problems
}

func (c *checker) plugin(rel string) (pluginJSON, bool) {
	f, ok := c.file(rel)
	if !ok {
		c.addf("metadata", "%s is missing", rel)
		return pluginJSON{}, false
	}
	var p pluginJSON
	if err := json.Unmarshal(f.Data, &p); err != nil {
		c.addf("metadatavalid", "%s is not valid JSON: %v", rel, err)
		return pluginJSON{}, false
	}
	return p, true
}

// nestedPluginJSONs finds plugin.json files below the root one, relative to the plugin folder.
func (c *checker) nestedPluginJSONs() []string {
	var out []string
	for _, n := range c.a.Names() {
		rel := strings.TrimPrefix(n, c.root+"/")
		if path.Base(rel) == "plugin.json" && rel != "plugin.json" {
			out = append(out, rel)
		}
	}
	return out
}

func (c *checker) checkPlugin(rel string, p pluginJSON) {
	dir := path.Dir(rel)
	switch {
	case p.ID == "":
		c.addf("metadatavalid", "%s: id is required", rel)
	case !idPattern.MatchString(p.ID):
		c.addf("pluginname", "%s: id %q does not match <org>-<name>-<type>", rel, p.ID)
	case !strings.HasSuffix(p.ID, "-"+p.Type):
		c.addf("typesuffix", "%s: id %q must end with its type %q", rel, p.ID, p.Type)
	}
	if p.Name == "" || p.Name == p.ID {
		c.addf("pluginname", "%s: name must be a human-friendly name, not empty or the id", rel)
	}
	if p.Info.Version == "" || strings.Contains(p.Info.Version, "%") {
		c.addf("metadatavalid", "%s: info.version %q was not filled in by the build", rel, p.Info.Version)
	}
	if !grafanaDepPattern.MatchString(p.Dependencies.GrafanaDependency) {
		c.addf("grafanadependency", "%s: grafanaDependency %q is not a range such as >=13.2.0", rel, p.Dependencies.GrafanaDependency)
	}
	// The catalog page shows these links; a reviewer looks for the source, its documentation and where issues go.
	if len(p.Info.Links) == 0 {
		c.addf("links", "%s: info.links is empty: link the source, documentation and issues", rel)
	}
	for _, l := range p.Info.Links {
		if l.Name == "" || !strings.HasPrefix(l.URL, "https://") {
			c.addf("links", "%s: link %q needs a name and an https URL, got %q", rel, l.Name, l.URL)
		}
	}
	for _, logo := range []string{p.Info.Logos.Small, p.Info.Logos.Large} {
		c.checkPath(rel, dir, logo, "logos")
	}
	for _, s := range p.Info.Screenshots {
		c.checkPath(rel, dir, s.Path, "screenshots")
		c.checkTofu(path.Join(dir, s.Path))
	}
	if _, ok := c.file(path.Join(dir, "module.js")); !ok {
		c.addf("modulejs", "%s: module.js is missing next to it", rel)
	}
	switch {
	case p.Alerting && !p.Backend:
		c.addf("backendbinary", "%s: alerting needs backend: true", rel)
	case p.Executable != "" && !p.Backend:
		c.addf("backendbinary", "%s: executable is set but backend is false", rel)
	case p.Backend && p.Executable == "":
		c.addf("backendbinary", "%s: backend is true but executable is missing", rel)
	case p.Backend:
		c.checkExecutables(rel, path.Join(dir, p.Executable))
	}
}

// checkTofu refuses a PNG screenshot showing characters as empty boxes: rendered without a font for its language.
func (c *checker) checkTofu(rel string) {
	f, ok := c.file(rel)
	if !ok || !strings.HasSuffix(rel, ".png") {
		return
	}
	n, err := tofuBoxesOf(f.Data)
	if err != nil {
		c.addf("screenshots", "%s is not a PNG: %v", rel, err)
		return
	}
	if n >= TofuLimit {
		c.addf("screenshots", "%s shows %d empty boxes where characters should be: it was rendered without a font for its language (npm run screenshots installs one)", rel, n)
	}
}

// tofuCounts remembers TofuBoxes per PNG content: checking an archive decodes every screenshot, and the same images
// are checked again and again (each release check, each broken copy in the tests).
var tofuCounts sync.Map

func tofuBoxesOf(data []byte) (int, error) {
	key := sha256.Sum256(data)
	if n, ok := tofuCounts.Load(key); ok {
		return n.(int), nil
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	n := TofuBoxes(img)
	tofuCounts.Store(key, n)
	return n, nil
}

// checkPath checks a path written in plugin.json: relative, without a leading dot or slash, and present.
func (c *checker) checkPath(rel, dir, p, rule string) {
	switch {
	case p == "":
		c.addf(rule, "%s: empty %s path", rel, rule)
	case strings.HasPrefix(p, ".") || strings.HasPrefix(p, "/"):
		c.addf("metadatapaths", "%s: %q must be relative without a leading '.' or '/'", rel, p)
	default:
		if _, ok := c.file(path.Join(dir, p)); !ok {
			c.addf("metadatapaths", "%s: %s does not exist in the archive", rel, path.Join(dir, p))
		}
	}
}

func (c *checker) checkExecutables(rel, base string) {
	for _, plat := range Platforms {
		name := base + "_" + plat
		f, ok := c.file(name)
		if !ok {
			c.addf("backendbinary", "%s: executable %s is missing", rel, name)
			continue
		}
		if !strings.HasSuffix(name, ".exe") && f.Mode.Perm() != 0o755 {
			c.addf("binarypermissions", "%s has mode %v, want 0755", name, f.Mode.Perm())
		}
		if plat == "linux_amd64" {
			info, err := buildinfo.Read(bytes.NewReader(f.Data))
			if err != nil {
				c.addf("backendbinary", "%s is not a Go executable: %v", name, err)
				continue
			}
			goos, goarch := buildSetting(info, "GOOS"), buildSetting(info, "GOARCH")
			if goos != "linux" || goarch != "amd64" {
				c.addf("backendbinary", "%s was built for %s/%s", name, goos, goarch)
			}
		}
	}
}

func buildSetting(info *buildinfo.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// checkIncluded requires every nested plugin to be declared in the app's includes with its type.
func (c *checker) checkIncluded(root pluginJSON, rel string, nested pluginJSON) {
	if root.Type != "app" {
		c.addf("includesnested", "%s is nested in a %s; only apps may nest plugins", rel, root.Type)
		return
	}
	for _, inc := range root.Includes {
		if inc.Path == rel {
			if inc.Type != nested.Type {
				c.addf("includesnested", "includes entry for %s has type %q, want %q", rel, inc.Type, nested.Type)
			}
			return
		}
	}
	c.addf("includesnested", "nested plugin %s is not declared in the app's includes", rel)
}

// checkIncludes requires every included dashboard to exist and be valid JSON.
func (c *checker) checkIncludes(root pluginJSON) {
	seen := map[string]bool{}
	for _, inc := range root.Includes {
		if inc.Type != "dashboard" {
			continue
		}
		// Grafana imports each include; one listed twice is a second menu entry for the same dashboard.
		if seen[inc.Path] {
			c.addf("includes", "dashboard %s is included twice", inc.Path)
		}
		seen[inc.Path] = true
		f, ok := c.file(inc.Path)
		if !ok {
			c.addf("metadatapaths", "dashboard %q: %s does not exist in the archive", inc.Name, inc.Path)
			continue
		}
		var d map[string]any
		if err := json.Unmarshal(f.Data, &d); err != nil {
			c.addf("metadatapaths", "dashboard %s is not valid JSON: %v", inc.Path, err)
		}
	}
}

func (c *checker) checkDocs() {
	readme, ok := c.file("README.md")
	switch {
	case !ok:
		c.addf("readme", "README.md is missing")
	case templateReadme.Match(readme.Data):
		c.addf("templatereadme", "README.md is still the create-plugin template")
	}
	lic, ok := c.file("LICENSE")
	if !ok {
		c.addf("license", "LICENSE is missing")
	} else if !containsAny(string(lic.Data), knownLicenseMarker) {
		c.addf("license", "LICENSE is not a recognised open-source license")
	}
	if _, ok := c.file("CHANGELOG.md"); !ok {
		c.addf("changelog", "CHANGELOG.md is missing")
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (c *checker) checkPackageJSON(sourceRoot string, root pluginJSON) {
	b, err := os.ReadFile(filepath.Join(sourceRoot, "package.json"))
	if err != nil {
		c.addf("packagejson", "cannot read package.json: %v", err)
		return
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		c.addf("packagejson", "package.json is not valid JSON: %v", err)
		return
	}
	if pkg.Version != root.Info.Version {
		c.addf("packagejson", "package.json version %q differs from plugin.json version %q", pkg.Version, root.Info.Version)
	}
}

// checkGoManifest compares go_plugin_build_manifest with the Go sources, both ways, as the validator does.
func (c *checker) checkGoManifest(sourceRoot string) {
	f, ok := c.file("go_plugin_build_manifest")
	if !ok {
		c.addf("gomanifest", "go_plugin_build_manifest is missing at the archive root")
		return
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
		hash, file, ok := strings.Cut(line, ":")
		if !ok {
			c.addf("gomanifest", "malformed manifest line %q", line)
			return
		}
		listed[file] = hash
	}
	// Files are read through an os.Root so that a symlink swapped in during the walk cannot lead outside the sources.
	root, err := os.OpenRoot(sourceRoot)
	if err != nil {
		c.addf("gomanifest", "opening sources: %v", err)
		return
	}
	defer root.Close()
	err = filepath.WalkDir(sourceRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(sourceRoot, p)
		if err != nil {
			return err
		}
		b, err := root.ReadFile(rel)
		rel = filepath.ToSlash(rel)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		want, ok := listed[rel]
		switch {
		case !ok:
			c.addf("gomanifest", "%s is not in the manifest: rebuild the backends", rel)
		case want != hex.EncodeToString(sum[:]):
			c.addf("gomanifest", "%s changed since the build: rebuild the backends", rel)
		}
		delete(listed, rel)
		return nil
	})
	if err != nil {
		c.addf("gomanifest", "walking sources: %v", err)
	}
	for file := range listed {
		c.addf("gomanifest", "manifest lists %s, which is not in the sources", file)
	}
}
