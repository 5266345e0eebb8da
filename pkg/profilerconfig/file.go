package profilerconfig

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// MaxFileBytes bounds what is read: the real file is well under 1 KiB, so anything larger is not it.
const MaxFileBytes = 1 << 20

// ErrNotRegular is returned when the allow-listed name is a symlink, directory or device rather than a file.
var ErrNotRegular = errors.New("not a regular file")

// ErrChanged is returned when the file was replaced between reading it and writing its successor; nothing was
// written, and trying again reads the new file.
var ErrChanged = errors.New("the file changed during the write")

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
	e, err := l.find(p)
	if err != nil {
		return State{}, err
	}
	d, err := e.open()
	if err != nil {
		return State{}, err
	}
	defer d.close()
	doc, fi, err := readFile(d, e.base())
	if err != nil || fi == nil {
		return State{}, err
	}
	s, err := parseState(doc)
	if err != nil {
		return State{}, fmt.Errorf("%s: %w", d.path(e.base()), err)
	}
	s.ModTime = fi.ModTime()
	return s, nil
}

// open opens the entry's pinned directory.
func (e *entry) open() (*dirHandle, error) {
	pin, err := e.pinned()
	if err != nil {
		return nil, err
	}
	return openDir(pin)
}

// readFile returns the file's bytes and info, or nil info without error when it does not exist. The file is
// opened without following a symlink and checked to be a regular file on the open handle itself.
func readFile(d *dirHandle, name string) ([]byte, fs.FileInfo, error) {
	f, err := d.open(name, openRead, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, ioError("inspect", d.path(name), err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (%s); allow-list the file itself", d.path(name), ErrNotRegular, fi.Mode().Type())
	}
	doc, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, nil, ioError("read", d.path(name), err)
	}
	if len(doc) > MaxFileBytes {
		return nil, nil, fmt.Errorf("%s: %w: larger than %d bytes", d.path(name), ErrMalformed, MaxFileBytes)
	}
	return doc, fi, nil
}

// pathLocks serialises writers of one file inside this process; the flock serialises processes.
var pathLocks sync.Map // resolved path → *sync.Mutex

// SetMetricEnable sets metric_enable in an allow-listed file, keeping every other byte of it, and creates the
// file with defaults when it is missing. A malformed, symlinked or read-only file is refused and left untouched.
func (l *AllowList) SetMetricEnable(p string, on bool) (Change, error) {
	e, err := l.find(p)
	if err != nil {
		return Change{}, err
	}
	d, err := e.open()
	if err != nil {
		return Change{}, err
	}
	defer d.close()
	name := e.base()
	rp := d.path(name)
	mu, _ := pathLocks.LoadOrStore(rp, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	unlock, err := lock(d, name+".lock")
	if err != nil {
		return Change{}, err
	}
	defer unlock()

	doc, fi, err := readFile(d, name)
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
		mode = fi.Mode().Perm()
		if mode&0o222 == 0 && !e.OverwriteReadOnly {
			return Change{}, fmt.Errorf("%s is read-only (mode %04o): make it writable, or allow overwriting read-only files for this entry in the app settings", rp, mode)
		}
		old, err := parseState(doc)
		if err != nil {
			return Change{}, fmt.Errorf("%s: %w; fix or remove the file by hand, it was not changed", rp, err)
		}
		c.Old = old.MetricEnable
		next, err = setKey(doc, "metric_enable", func(old []byte) []byte { return switchLiteral(old, on) })
		if err != nil {
			return Change{}, fmt.Errorf("%s: %w", rp, err)
		}
	}
	if fi != nil && string(next) == string(doc) {
		c.State, err = stateOf(next, fi.ModTime())
		return c, err
	}
	if err := replace(d, name, next, mode, fi); err != nil {
		return Change{}, err
	}
	c.Written = true
	_, now, err := readFile(d, name)
	if err != nil || now == nil {
		return Change{}, fmt.Errorf("%s: %w", rp, errors.Join(err, ErrChanged))
	}
	c.State, err = stateOf(next, now.ModTime())
	return c, err
}

// lock opens the lock file inside the directory, never through a symlink, and takes it.
func lock(d *dirHandle, name string) (func(), error) {
	f, err := d.open(name, openLock, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close() // only opened to be locked; the error returned says why
		return nil, fmt.Errorf("lock file %s: %w", d.path(name), ErrNotRegular)
	}
	return lockFile(f)
}

func stateOf(doc []byte, mod time.Time) (State, error) {
	s, err := parseState(doc)
	s.ModTime = mod
	return s, err
}

// replace writes doc to a new temp file in the directory, syncs it, checks that name is still the file that was
// read (old, or still missing), renames the temp file over it and syncs the directory: readers see either the
// old or the new file, a crash keeps one of them, and a file swapped in meanwhile (a symlink, another file) is
// neither followed nor overwritten.
func replace(d *dirHandle, name string, doc []byte, mode fs.FileMode, old fs.FileInfo) (err error) {
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	tmpName := "." + name + ".tmp-" + hex.EncodeToString(suffix[:])
	tmp, err := d.open(tmpName, openCreate, 0o600)
	if err != nil {
		return fmt.Errorf("create a temp file: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close() // already failing: the temp file is removed next
			d.remove(tmpName)
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
	id, exists, err := d.current(name)
	if err != nil {
		return err
	}
	if (old == nil) == exists || (old != nil && id != identityOf(old)) {
		return fmt.Errorf("%s: %w (replaced, removed or swapped for a link); nothing was written, try again", d.path(name), ErrChanged)
	}
	if err = d.rename(tmpName, name); err != nil {
		return err
	}
	return d.sync()
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
