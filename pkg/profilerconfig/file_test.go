package profilerconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const sample = "{\n    \"enable\": 1,\n    \"prof_dir\": \"/home/u/.ms_server_profiler/\",\n    \"metric_enable\": 0,\n    \"timelimit\": 0,\n    \"domain\": \"Request;KVCache\"\n}\n"

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAllowListCheck(t *testing.T) {
	root := t.TempDir()
	allowedDir := filepath.Join(root, "ascend")
	otherDir := filepath.Join(root, "other")
	for _, d := range []string{allowedDir, otherDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	allowed := filepath.Join(allowedDir, "ms_service_profiler_config.json")
	// A symlinked directory leading outside, and one leading to the allowed directory.
	if err := os.Symlink(otherDir, filepath.Join(allowedDir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(allowedDir, filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	l, err := NewAllowList(allowed)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		ok         bool
	}{
		{"exact", allowed, true},
		{"unclean but same file", allowedDir + "/./sub/../ms_service_profiler_config.json", true},
		{"through a symlinked directory to the same file", filepath.Join(root, "alias", "ms_service_profiler_config.json"), true},
		{"dot-dot escape", allowedDir + "/../other/ms_service_profiler_config.json", false},
		{"symlink escape", filepath.Join(allowedDir, "escape", "ms_service_profiler_config.json"), false},
		{"other name in the allowed directory", filepath.Join(allowedDir, "x.json"), false},
		{"relative", "ascend/ms_service_profiler_config.json", false},
		{"empty", "", false},
		{"directory only", allowedDir + "/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Check(tt.path)
			if tt.ok && (err != nil || got != allowed) {
				t.Errorf("Check(%q) = %q, %v; want %q", tt.path, got, err, allowed)
			}
			if !tt.ok && err == nil {
				t.Errorf("Check(%q) = %q, want an error", tt.path, got)
			}
		})
	}
	if _, err := l.Check(filepath.Join(allowedDir, "escape", "..", "x.json")); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("got %v, want ErrNotAllowed", err)
	}
}

func TestNewAllowListRejects(t *testing.T) {
	for _, p := range []string{"", "relative.json", "/", "/tmp/.."} {
		if _, err := NewAllowList(p); err == nil {
			t.Errorf("NewAllowList(%q) accepted", p)
		}
	}
}

func TestSetMetricEnable(t *testing.T) {
	tests := []struct {
		name      string
		content   *string // nil: file missing
		on        bool
		want      string
		created   bool
		written   bool
		wantOld   bool
		errIs     error
		untouched bool
	}{
		{name: "switch on, everything else kept", content: ptr(sample), on: true, written: true,
			want: strings.Replace(sample, `"metric_enable": 0`, `"metric_enable": 1`, 1)},
		{name: "switch off", content: ptr(`{"metric_enable":1,"enable":0,"zz":[1,2]}`), on: false, written: true, wantOld: true,
			want: `{"metric_enable":0,"enable":0,"zz":[1,2]}`},
		{name: "already on: left alone", content: ptr(`{"metric_enable": 1}`), on: true, wantOld: true, want: `{"metric_enable": 1}`},
		{name: "absent key appended", content: ptr("{\n  \"enable\": 0\n}\n"), on: true, written: true,
			want: "{\n  \"enable\": 0,\n  \"metric_enable\": 1\n}\n"},
		{name: "missing file created with defaults", on: true, created: true, written: true,
			want: "{\n    \"enable\": 0,\n    \"metric_enable\": 1\n}\n"},
		{name: "malformed refused", content: ptr(`{"enable": 0, "metric_enable": 0`), on: true, errIs: ErrMalformed, untouched: true},
		{name: "array refused", content: ptr(`[{"metric_enable": 0}]`), on: true, errIs: ErrMalformed, untouched: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "ms_service_profiler_config.json")
			if tt.content != nil {
				write(t, p, *tt.content)
			}
			l, _ := NewAllowList(p)
			c, err := l.SetMetricEnable(p, tt.on)
			if tt.errIs != nil {
				if !errors.Is(err, tt.errIs) || !strings.Contains(err.Error(), "was not changed") {
					t.Fatalf("err = %v, want %v", err, tt.errIs)
				}
				if got := read(t, p); got != *tt.content {
					t.Errorf("malformed file changed to %q", got)
				}
				assertOnlyFiles(t, dir, "ms_service_profiler_config.json", "ms_service_profiler_config.json.lock")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, p); got != tt.want {
				t.Errorf("file is\n%s\nwant\n%s", got, tt.want)
			}
			if c.Created != tt.created || c.Written != tt.written || c.Old != tt.wantOld || c.New != tt.on || !c.State.Exists || c.State.MetricEnable != tt.on {
				t.Errorf("change = %+v", c)
			}
			fi, _ := os.Stat(p)
			wantMode := os.FileMode(0o640)
			if tt.created {
				wantMode = 0o644
			}
			if fi.Mode().Perm() != wantMode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), wantMode)
			}
			assertOnlyFiles(t, dir, "ms_service_profiler_config.json", "ms_service_profiler_config.json.lock")
			s, err := l.Read(p)
			if err != nil || s.MetricEnable != tt.on || s.ModTime.IsZero() {
				t.Errorf("Read = %+v, %v", s, err)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// assertOnlyFiles checks that no temp file was left behind.
func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}

func TestReadStates(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	l, _ := NewAllowList(p)
	s, err := l.Read(p)
	if err != nil || s.Exists || s.MetricEnable {
		t.Fatalf("missing file: %+v, %v", s, err)
	}
	write(t, p, "not json")
	if _, err := l.Read(p); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed: %v", err)
	}
	write(t, p, `{"enable": true, "metric_enable": 1}`)
	if s, err := l.Read(p); err != nil || !s.Enable || !s.MetricEnable {
		t.Errorf("got %+v, %v", s, err)
	}
	if _, err := l.Read(filepath.Join(dir, "other.json")); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("not allow-listed: %v", err)
	}
}

func TestSymlinkedFileRefused(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "secret.json")
	write(t, target, `{"metric_enable": 0}`)
	p := filepath.Join(dir, "c.json")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	l, _ := NewAllowList(p)
	if _, err := l.Read(p); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Read: %v", err)
	}
	if _, err := l.SetMetricEnable(p, true); !errors.Is(err, ErrNotRegular) {
		t.Errorf("SetMetricEnable: %v", err)
	}
	if got := read(t, target); got != `{"metric_enable": 0}` {
		t.Errorf("target changed: %s", got)
	}
}

func TestUnwritable(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) string
		want  string
	}{
		{"parent is a file", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "file")
			write(t, f, "x")
			return filepath.Join(f, "c.json")
		}, "not a directory"},
		{"missing directory", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), "nope", "c.json")
		}, "does not exist"},
		{"read-only directory", func(t *testing.T) string {
			if os.Geteuid() == 0 {
				t.Skip("root ignores directory permissions")
			}
			d := t.TempDir()
			p := filepath.Join(d, "c.json")
			write(t, p, `{"metric_enable": 0}`)
			if err := os.Chmod(d, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(d, 0o755) })
			return p
		}, "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.setup(t)
			l, _ := NewAllowList(p)
			_, err := l.SetMetricEnable(p, true)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestConcurrentToggles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	write(t, p, sample)
	// Two allow-lists stand for two app instances; the lock is per file, not per list.
	lists := []*AllowList{must(NewAllowList(p)), must(NewAllowList(p))}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := lists[i%2].SetMetricEnable(p, i%2 == 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	on, off := strings.Replace(sample, `"metric_enable": 0`, `"metric_enable": 1`, 1), sample
	if got := read(t, p); got != on && got != off {
		t.Fatalf("file after 200 concurrent toggles is neither state:\n%s", got)
	}
	// Which goroutine wrote last is up to the scheduler; one more write makes the last value known.
	c, err := lists[0].SetMetricEnable(p, true)
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, p)
	var doc map[string]any
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("file is not valid JSON after concurrent toggles: %v\n%s", err, got)
	}
	if got != on || !c.State.MetricEnable {
		t.Errorf("file after toggles:\n%s", got)
	}
	assertOnlyFiles(t, dir, "c.json", "c.json.lock")
}

func must(l *AllowList, err error) *AllowList {
	if err != nil {
		panic(err)
	}
	return l
}
