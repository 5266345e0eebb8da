//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package profilerconfig

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestKeepsOwnerWhenRoot checks that a write by root leaves the inference server's user owning the file.
func TestKeepsOwnerWhenRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root may give a file to another user")
	}
	p := filepath.Join(t.TempDir(), "c.json")
	write(t, p, `{"metric_enable": 0}`)
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	l, _ := NewAllowList(p)
	if _, err := l.SetMetricEnable(p, true); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 1234 || st.Gid != 5678 || fi.Mode().Perm() != 0o600 {
		t.Errorf("owner %d:%d mode %v, want 1234:5678 0600", st.Uid, st.Gid, fi.Mode().Perm())
	}
}
