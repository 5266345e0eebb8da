//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package profilerconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostileTree is an allow-listed config in root/ascend (reached through the symlink root/link) and a file outside
// the allow-list that an attacker wants the writer to read or replace.
type hostileTree struct {
	root, real, link, cfg, outside string
}

const outsideMarker = "OUTSIDE-FILE-MUST-NEVER-MOVE"

func newHostileTree(t *testing.T) hostileTree {
	t.Helper()
	root := t.TempDir()
	h := hostileTree{root: root, real: filepath.Join(root, "ascend"), link: filepath.Join(root, "link")}
	for _, d := range []string{h.real, filepath.Join(root, "outside"), filepath.Join(root, "outside", "target")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(h.real, h.link); err != nil {
		t.Fatal(err)
	}
	h.cfg = filepath.Join(h.link, "ms_service_profiler_config.json")
	write(t, filepath.Join(h.real, "ms_service_profiler_config.json"), sample)
	h.outside = filepath.Join(root, "outside", "secret.json")
	write(t, h.outside, `{"metric_enable": 1, "note": "`+outsideMarker+`"}`)
	return h
}

// TestSymlinkSwapRace (item 10): an attacker swaps the config for a symlink to a file outside the allow-list and
// back, as fast as it can, while the app writes. The outside file is never read into the config nor written.
func TestSymlinkSwapRace(t *testing.T) {
	h := newHostileTree(t)
	l, err := NewAllowList(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(h.real, "ms_service_profiler_config.json")
	keep := filepath.Join(h.real, "keep")
	var stop atomic.Bool
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200_000 && !stop.Load(); i++ {
			_ = os.Remove(keep)
			if os.Link(cfg, keep) != nil {
				continue
			}
			s := filepath.Join(h.real, "s")
			_ = os.Remove(s)
			if os.Symlink(h.outside, s) == nil && os.Rename(s, cfg) == nil {
				swaps.Add(1)
			}
			_ = os.Rename(keep, cfg)
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	var writes, refusals int
	for i := 0; i < 20_000 && time.Now().Before(deadline); i++ {
		if _, err := l.SetMetricEnable(h.cfg, i%2 == 0); err != nil {
			refusals++
			continue
		}
		writes++
	}
	stop.Store(true)
	wg.Wait()
	if got := read(t, h.outside); !strings.Contains(got, outsideMarker) || strings.Contains(got, "enable\": 0") {
		t.Fatalf("the outside file changed: %q", got)
	}
	if fi, err := os.Lstat(cfg); err == nil && fi.Mode().IsRegular() {
		if got := read(t, cfg); strings.Contains(got, outsideMarker) {
			t.Fatalf("the outside file's content was written as the config: %q", got)
		}
	}
	t.Logf("%d swaps, %d writes, %d refused", swaps.Load(), writes, refusals)
	if swaps.Load() == 0 || writes == 0 {
		t.Fatalf("the race did not run: %d swaps, %d writes", swaps.Load(), writes)
	}
}

// TestSymlinkedConfigRefused: a config that is a symlink is never followed, for reading or writing.
func TestSymlinkedConfigRefused(t *testing.T) {
	h := newHostileTree(t)
	l, err := NewAllowList(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(h.real, "ms_service_profiler_config.json")
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.outside, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(h.cfg); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Read through a symlinked config: %v", err)
	}
	if _, err := l.SetMetricEnable(h.cfg, false); !errors.Is(err, ErrNotRegular) {
		t.Errorf("SetMetricEnable through a symlinked config: %v", err)
	}
	if got := read(t, h.outside); !strings.Contains(got, outsideMarker) {
		t.Fatalf("outside file changed: %q", got)
	}
}

// TestDirectorySwapAfterSave (item 11): the directory's symlink is re-pointed after the settings were saved; the
// writer refuses instead of writing into the new target.
func TestDirectorySwapAfterSave(t *testing.T) {
	h := newHostileTree(t)
	l, err := NewAllowList(h.cfg) // the settings are saved: the directory is pinned now
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(h.root, "outside", "target")
	if err := os.Remove(h.link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, h.link); err != nil {
		t.Fatal(err)
	}
	_, err = l.SetMetricEnable(h.cfg, true)
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "save the app settings again") {
		t.Fatalf("write after the directory moved: %v", err)
	}
	if _, err := l.Read(h.cfg); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("read after the directory moved: %v", err)
	}
	entries, _ := os.ReadDir(target)
	if len(entries) != 0 {
		t.Fatalf("files created in the new target: %v", entries)
	}
	// The real directory itself swapped for another with the same path: caught by its identity.
	if err := os.Remove(h.link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(h.real, h.link); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(h.real, h.real+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(h.real, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := l.SetMetricEnable(h.cfg, true); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("write into a replaced directory: %v", err)
	}
	if entries, _ := os.ReadDir(h.real); len(entries) != 0 {
		t.Fatalf("files created in the replaced directory: %v", entries)
	}
}

// TestLockFileSymlinkRefused (item 12): a lock file planted as a symlink is not followed.
func TestLockFileSymlinkRefused(t *testing.T) {
	h := newHostileTree(t)
	l, err := NewAllowList(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(h.root, "outside", "x")
	if err := os.Symlink(planted, filepath.Join(h.real, "ms_service_profiler_config.json.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.SetMetricEnable(h.cfg, true); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Fatalf("write with a symlinked lock file: %v", err)
	}
	if _, err := os.Lstat(planted); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock's symlink target was created: %v", err)
	}
}

// TestReadOnlyConfig (item 13): a file without write permission is not replaced unless its entry says so.
func TestReadOnlyConfig(t *testing.T) {
	h := newHostileTree(t)
	cfg := filepath.Join(h.real, "ms_service_profiler_config.json")
	if err := os.Chmod(cfg, 0o444); err != nil {
		t.Fatal(err)
	}
	l, err := NewAllowList(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.SetMetricEnable(h.cfg, true)
	if err == nil || !strings.Contains(err.Error(), "read-only (mode 0444)") {
		t.Fatalf("write to a 0444 file: %v", err)
	}
	if read(t, cfg) != sample {
		t.Fatal("the read-only file changed")
	}
	lo, err := NewAllowListOf(Entry{Path: h.cfg, OverwriteReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := lo.SetMetricEnable(h.cfg, true)
	if err != nil || !c.Written {
		t.Fatalf("write with overwriteReadOnly: %+v %v", c, err)
	}
	if fi, _ := os.Stat(cfg); fi.Mode().Perm() != 0o444 {
		t.Fatalf("mode after the allowed write: %v", fi.Mode())
	}
}
