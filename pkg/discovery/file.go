package discovery

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// fileSource reads a file_sd file (JSON, or YAML by its extension). It is read at every discovery round, and only
// when its size or modification time changed since the last good read: a file rewritten a hundred times a second
// costs one read per round, and a half-written file fails that round alone (its previous targets stay).
type fileSource struct {
	path string

	mu      sync.Mutex
	size    int64
	modTime time.Time
	last    []Target
	trunc   bool
	limit   int
}

func newFile(s Source) *fileSource { return &fileSource{path: s.Path} }

func (f *fileSource) Discover(_ context.Context, max int) ([]Target, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, false, fmt.Errorf("file_sd: %w", err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("file_sd: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("file_sd: %s is not a regular file", f.path)
	}
	if f.last != nil && info.Size() == f.size && info.ModTime().Equal(f.modTime) && max == f.limit {
		return f.last, f.trunc, nil
	}
	if info.Size() > MaxBodyBytes {
		return nil, false, fmt.Errorf("file_sd: %s is %d bytes, over the %d MB limit", f.path, info.Size(), MaxBodyBytes>>20)
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxBodyBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("file_sd: %w", err)
	}
	if len(b) > MaxBodyBytes {
		return nil, false, fmt.Errorf("file_sd: %s grew over the %d MB limit while read", f.path, MaxBodyBytes>>20)
	}
	ext := strings.ToLower(filepath.Ext(f.path))
	ts, trunc, err := parseGroups(b, ext == ".yaml" || ext == ".yml", max, map[string]string{"__meta_filepath": f.path})
	if err != nil {
		return nil, false, fmt.Errorf("file_sd %s: %w", f.path, err)
	}
	if ts == nil {
		ts = []Target{}
	}
	f.size, f.modTime, f.last, f.trunc, f.limit = info.Size(), info.ModTime(), ts, trunc, max
	return ts, trunc, nil
}

func (*fileSource) Close() {}
