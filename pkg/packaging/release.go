package packaging

import (
	"crypto/md5" // #nosec G501 -- the plugin catalog asks for an MD5 checksum of the archive; it is not used for security
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// Release is what Build writes: the archive and its checksum files.
type Release struct {
	Zip, SHA256, MD5 string
}

// ReleaseName is the archive's file name for a plugin id and version, as Grafana's release tooling names it.
func ReleaseName(id, version string) string { return id + "-" + version + ".zip" }

// Build zips distDir under a folder named after its plugin.json id into outDir as <id>-<version>.zip, then writes
// <zip>.sha256 and <zip>.md5 in the format sha256sum -c and md5sum -c read.
func Build(distDir, outDir string) (Release, error) {
	b, err := os.ReadFile(filepath.Join(distDir, "plugin.json"))
	if err != nil {
		return Release{}, fmt.Errorf("dist is not built (run npm run build first): %w", err)
	}
	var p pluginJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return Release{}, fmt.Errorf("%s: %w", filepath.Join(distDir, "plugin.json"), err)
	}
	if p.ID == "" || p.Info.Version == "" {
		return Release{}, fmt.Errorf("%s has no id or info.version", filepath.Join(distDir, "plugin.json"))
	}
	name := ReleaseName(p.ID, p.Info.Version)
	r := Release{Zip: filepath.Join(outDir, name)}
	r.SHA256, r.MD5 = r.Zip+".sha256", r.Zip+".md5"
	if err := Zip(distDir, p.ID, r.Zip); err != nil {
		return Release{}, err
	}
	for file, h := range map[string]hash.Hash{r.SHA256: sha256.New(), r.MD5: md5.New()} { // #nosec G401 -- checksum the catalog asks for, not a security control
		sum, err := fileSum(r.Zip, h)
		if err != nil {
			return Release{}, err
		}
		if err := os.WriteFile(file, []byte(sum+"  "+name+"\n"), 0o644); err != nil { // #nosec G306 -- a public checksum, meant to be read by anyone
			return Release{}, err
		}
	}
	return r, nil
}

// fileSum returns the hex digest of a file.
func fileSum(path string, h hash.Hash) (string, error) {
	f, err := os.Open(path) // #nosec G304 -- the archive this package has just written
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
