package profilerconfig

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// MaxFileBytes bounds what is read: the real file is well under 1 KiB, so anything larger is not it.
const MaxFileBytes = 1 << 20

// ErrNotRegular is returned when the allow-listed name is a symlink, directory or device rather than a file.
var ErrNotRegular = errors.New("not a regular file")

// defaultDoc is written when the file is missing: the profiler's own default (enable 0) plus the switch.
const defaultDoc = "{\n    \"enable\": 0,\n    \"metric_enable\": %d\n}\n"

// Change is the outcome of one SetMetricEnable.
type Change struct {
	// Path is the resolved file path written.
	Path string
	// Old and New are metric_enable before and after (Old is false for a missing file).
	Old, New bool
	// Created is true when the file did not exist and was created with defaults.
	Created bool
	// Written is false when the file already held the requested value and was left alone.
	Written bool
	// State is the file as it is after the change.
	State State
}

// Read returns the state of an allow-listed file.
func (l *AllowList) Read(p string) (State, error) {
	rp, err := l.Check(p)
	if err != nil {
		return State{}, err
	}
	doc, fi, err := readFile(rp)
	if err != nil || fi == nil {
		return State{}, err
	}
	s, err := parseState(doc)
	if err != nil {
		return State{}, fmt.Errorf("%s: %w", rp, err)
	}
	s.ModTime = fi.ModTime()
	return s, nil
}

// readFile returns the file's bytes and info, or nil info without error when it does not exist.
func readFile(p string) ([]byte, fs.FileInfo, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, ioError("inspect", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (%s); allow-list the file itself", p, ErrNotRegular, fi.Mode().Type())
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, ioError("open", p, err)
	}
	defer f.Close()
	doc, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, nil, ioError("read", p, err)
	}
	if len(doc) > MaxFileBytes {
		return nil, nil, fmt.Errorf("%s: %w: larger than %d bytes", p, ErrMalformed, MaxFileBytes)
	}
	return doc, fi, nil
}

// pathLocks serialises writers of one file inside this process; the flock serialises processes.
var pathLocks sync.Map // resolved path → *sync.Mutex

// SetMetricEnable sets metric_enable in an allow-listed file, keeping every other byte of it, and creates the
// file with defaults when it is missing. A malformed file is refused and left untouched.
func (l *AllowList) SetMetricEnable(p string, on bool) (Change, error) {
	rp, err := l.Check(p)
	if err != nil {
		return Change{}, err
	}
	mu, _ := pathLocks.LoadOrStore(rp, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	unlock, err := lockFile(rp + ".lock")
	if err != nil {
		return Change{}, err
	}
	defer unlock()

	doc, fi, err := readFile(rp)
	if err != nil {
		return Change{}, err
	}
	c := Change{Path: rp, New: on, Created: fi == nil}
	var next []byte
	mode := fs.FileMode(0o644)
	if fi == nil {
		v := 0
		if on {
			v = 1
		}
		next = fmt.Appendf(nil, defaultDoc, v)
	} else {
		old, err := parseState(doc)
		if err != nil {
			return Change{}, fmt.Errorf("%s: %w; fix or remove the file by hand, it was not changed", rp, err)
		}
		c.Old = old.MetricEnable
		next, err = setKey(doc, "metric_enable", func(old []byte) []byte { return switchLiteral(old, on) })
		if err != nil {
			return Change{}, fmt.Errorf("%s: %w", rp, err)
		}
		mode = fi.Mode().Perm()
	}
	if fi != nil && string(next) == string(doc) {
		c.State, err = stateOf(next, fi.ModTime())
		return c, err
	}
	if err := replace(rp, next, mode, fi); err != nil {
		return Change{}, err
	}
	c.Written = true
	now, err := os.Stat(rp)
	if err != nil {
		return Change{}, ioError("inspect", rp, err)
	}
	c.State, err = stateOf(next, now.ModTime())
	return c, err
}

func stateOf(doc []byte, mod time.Time) (State, error) {
	s, err := parseState(doc)
	s.ModTime = mod
	return s, err
}

// replace writes doc to a temp file beside p, syncs it, renames it over p and syncs the directory, so readers
// see either the old or the new file and a crash keeps one of them.
func replace(p string, doc []byte, mode fs.FileMode, old fs.FileInfo) (err error) {
	dir := filepath.Dir(p)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return ioError("create a temp file in", dir, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(doc); err != nil {
		return ioError("write", tmp.Name(), err)
	}
	if !keepOwner(tmp, old) {
		// The file changes owner (to the Grafana user), so its old owner — typically the inference server's
		// user — keeps access only through the group and other bits: make sure they can read it.
		mode |= 0o044
	}
	if err = tmp.Chmod(mode); err != nil {
		return ioError("chmod", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return ioError("sync", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return ioError("close", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), p); err != nil {
		return ioError("rename onto", p, err)
	}
	return syncDir(dir)
}

// ioError names the operation and path, and for a permission problem says which user this process runs as,
// since that is what the volume's owner or mode must allow.
func ioError(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("cannot %s %s: %w (Grafana runs as uid %d; give it write access to the directory)", op, p, err, os.Getuid())
	}
	return fmt.Errorf("cannot %s %s: %w", op, p, err)
}
