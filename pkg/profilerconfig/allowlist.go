package profilerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// ErrNotAllowed is returned for a path that is not on the allow-list once `..` and symlinks are resolved.
var ErrNotAllowed = errors.New("path is not on the allow-list")

// AllowList is the set of profiler config files the app may read and write.
type AllowList struct {
	paths []string
}

// NewAllowList checks that every path is an absolute file path and keeps them cleaned.
func NewAllowList(paths ...string) (*AllowList, error) {
	l := &AllowList{}
	for _, p := range paths {
		c, err := cleanPath(p)
		if err != nil {
			return nil, err
		}
		l.paths = append(l.paths, c)
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

// resolve cleans p and resolves symlinks in its directory (not in the file name: a symlinked file is refused
// later, and rename would replace the link rather than its target).
func resolve(p string) (string, error) {
	c, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(c))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("directory %s does not exist (is the shared volume mounted?)", filepath.Dir(c))
	}
	if err != nil {
		return "", fmt.Errorf("resolve directory of %s: %w", c, err)
	}
	return filepath.Join(dir, filepath.Base(c)), nil
}

// Check resolves p and returns the resolved path if it is one of the allow-listed files resolved the same way.
// Both sides are resolved on every call, so a symlink changed after the settings were saved cannot be used to
// escape.
func (l *AllowList) Check(p string) (string, error) {
	want, err := resolve(p)
	if err != nil {
		return "", err
	}
	for _, a := range l.paths {
		if got, err := resolve(a); err == nil && got == want {
			return want, nil
		}
	}
	return "", fmt.Errorf("%w: %s", ErrNotAllowed, p)
}
