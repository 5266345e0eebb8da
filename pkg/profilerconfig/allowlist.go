package profilerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
)

// ErrNotAllowed is returned for a path that is not on the allow-list once `..` and symlinks are resolved, or whose
// directory no longer is the one pinned when the allow-list was made.
var ErrNotAllowed = errors.New("path is not on the allow-list")

// Entry is one allow-listed file.
type Entry struct {
	Path string
	// OverwriteReadOnly lets writes replace a file that has no write permission bit; without it such a file is
	// refused, since its owner made it read-only on purpose.
	OverwriteReadOnly bool
}

// AllowList is the set of profiler config files the app may read and write. Each entry's directory is resolved
// and pinned (real path and identity) when the list is made, that is when an Admin saves the settings, or on first
// use if it does not exist yet; a directory that later resolves elsewhere, or was replaced, is refused.
type AllowList struct {
	entries []*entry
}

type entry struct {
	Entry
	mu  sync.Mutex
	pin *dirPin // nil until the directory could be resolved
}

// NewAllowListOf checks that every path is an absolute file path, keeps them cleaned and pins the directories
// that exist.
func NewAllowListOf(entries ...Entry) (*AllowList, error) {
	l := &AllowList{}
	for _, e := range entries {
		c, err := cleanPath(e.Path)
		if err != nil {
			return nil, err
		}
		e.Path = c
		en := &entry{Entry: e}
		_, _ = en.pinned() // a directory missing now is pinned on first use
		l.entries = append(l.entries, en)
	}
	return l, nil
}

func cleanPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("path is empty")
	}
	c := filepath.Clean(p)
	if !filepath.IsAbs(c) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	if base := filepath.Base(c); base == string(filepath.Separator) || base == "." || base == ".." {
		return "", fmt.Errorf("path %q does not name a file", p)
	}
	return c, nil
}

// resolveDir cleans p and resolves symlinks in its directory (not in the file name: a symlinked file is refused
// when opened, and rename would replace the link rather than its target).
func resolveDir(p string) (dir, base string, err error) {
	c, err := cleanPath(p)
	if err != nil {
		return "", "", err
	}
	dir, err = filepath.EvalSymlinks(filepath.Dir(c))
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("directory %s does not exist (is the shared volume mounted?)", filepath.Dir(c))
	}
	if err != nil {
		return "", "", fmt.Errorf("resolve directory of %s: %w", c, err)
	}
	return dir, filepath.Base(c), nil
}

// pinned returns the entry's pinned directory, pinning it now if it was missing when the list was made.
func (e *entry) pinned() (*dirPin, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pin != nil {
		return e.pin, nil
	}
	dir, _, err := resolveDir(e.Path)
	if err != nil {
		return nil, err
	}
	pin, err := pinDir(dir)
	if err != nil {
		return nil, err
	}
	e.pin = pin
	return pin, nil
}

// base is the entry's file name inside its directory.
func (e *entry) base() string { return filepath.Base(e.Path) }

// Check returns the real path of p if p is an allow-listed file inside that entry's pinned directory.
func (l *AllowList) Check(p string) (string, error) {
	e, err := l.find(p)
	if err != nil {
		return "", err
	}
	return filepath.Join(e.pin.dir, e.base()), nil
}

// find returns the entry of p: p must resolve to an allow-listed file inside that entry's pinned directory.
func (l *AllowList) find(p string) (*entry, error) {
	dir, base, err := resolveDir(p)
	if err != nil {
		return nil, err
	}
	var moved *entry
	for _, e := range l.entries {
		if e.base() != base {
			continue
		}
		if e.Path != filepath.Clean(p) {
			// Another spelling of an entry (through another symlink, or with ..) counts only where it resolves to
			// the entry's pinned directory.
			if pin, err := e.pinned(); err != nil || pin.dir != dir {
				continue
			}
			return e, nil
		}
		pin, err := e.pinned()
		if err != nil {
			return nil, err
		}
		if pin.dir == dir {
			return e, nil
		}
		moved = e
	}
	if moved != nil {
		return nil, fmt.Errorf("%w: %s now resolves to %s, not %s as when the settings were saved; if that move is intended, save the app settings again",
			ErrNotAllowed, moved.Path, filepath.Join(dir, base), filepath.Join(moved.pin.dir, base))
	}
	return nil, fmt.Errorf("%w: %s", ErrNotAllowed, p)
}
