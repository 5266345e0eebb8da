package packaging

import (
	"crypto/md5" // #nosec G501 -- verifies the catalog's MD5 checksum file
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// checkSums requires <zip>.sha256 and <zip>.md5 to hold the zip's digests in sha256sum/md5sum format.
func checkSums(t *testing.T, zipPath string) {
	t.Helper()
	data, err := os.ReadFile(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	for ext, h := range map[string]hash.Hash{".sha256": sha256.New(), ".md5": md5.New()} { // #nosec G401 -- test of the checksum file
		h.Write(data)
		want := hex.EncodeToString(h.Sum(nil)) + "  " + filepath.Base(zipPath) + "\n"
		got, err := os.ReadFile(zipPath + ext)
		if err != nil {
			t.Errorf("checksum file: %v", err)
		} else if string(got) != want {
			t.Errorf("%s holds %q, want %q", zipPath+ext, got, want)
		}
	}
}

func TestBuildWritesNamedZipAndChecksums(t *testing.T) {
	dist, out := t.TempDir(), t.TempDir()
	pj := `{"id":"acme-demo-app","type":"app","info":{"version":"1.2.3"}}`
	if err := os.WriteFile(filepath.Join(dist, "plugin.json"), []byte(pj), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dist, "datasource"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "datasource", "gpx_demo_linux_amd64"), []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Build(dist, out)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, "acme-demo-app-1.2.3.zip"); r.Zip != want {
		t.Errorf("zip %s, want %s", r.Zip, want)
	}
	a, err := ReadZip(r.Zip)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a.Names(), ","); got != "acme-demo-app/datasource/gpx_demo_linux_amd64,acme-demo-app/plugin.json" {
		t.Errorf("archive holds %s", got)
	}
	if m := a["acme-demo-app/datasource/gpx_demo_linux_amd64"].Mode.Perm(); m != 0o755 {
		t.Errorf("executable mode %v, want 0755", m)
	}
	checkSums(t, r.Zip)
}

func TestBuildRefusesUnbuiltDist(t *testing.T) {
	_, err := Build(t.TempDir(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "npm run build") {
		t.Fatalf("want an error saying to build first, got %v", err)
	}
}

// TestReleaseZipIsNamedAndSummed checks the zip npm run package wrote (CI sets $INFERSCOPE_PLUGIN_ZIP): named after
// the id and package.json's version, with both checksum files beside it.
func TestReleaseZipIsNamedAndSummed(t *testing.T) {
	zipPath := os.Getenv(zipEnv)
	if zipPath == "" {
		t.Skip(zipEnv + " is not set: run npm run package and point it at the zip")
	}
	b, err := os.ReadFile(filepath.Join(harness.RepoRoot(t), "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	if got, want := filepath.Base(zipPath), ReleaseName(appID, pkg.Version); got != want {
		t.Errorf("release zip is named %s, want %s", got, want)
	}
	checkSums(t, zipPath)
}
