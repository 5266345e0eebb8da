package agent

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
)

// Limits of the trace routes.
const (
	// TraceListBatch is how many directory entries one listing reads at a time: a directory of 50 000 files is
	// never held whole.
	TraceListBatch = 256
	// MaxConcurrentListings bounds the directory scans under way at once: listings asked for while one runs wait
	// for it and share its answer.
	MaxConcurrentListings = 1
	// TraceDownloadTimeout bounds one trace download, on the agent (its write deadline) and in the app's client.
	TraceDownloadTimeout = 5 * time.Minute
)

// errTraceDirMoved is a trace directory that is no longer the one pinned at start.
var errTraceDirMoved = errors.New("the trace directory changed")

// traceName is what a trace file may be called: one path segment, no hidden files.
var traceName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]{0,254}$`)

// ValidTraceName reports whether name can be a trace's name: the app checks before asking, the agent again.
func ValidTraceName(name string) bool { return traceName.MatchString(name) }

// traceDir is -trace-dir pinned at start: its real path, an os.Root on it and its identity, compared on every use
// so that a directory swapped for another or for a symlink is refused instead of served.
type traceDir struct {
	path string
	root *os.Root
	id   os.FileInfo
	mu   sync.Mutex
	scan *traceScan // the scan under way, nil when none
}

// traceScan is one directory scan; done is closed when list and err are set.
type traceScan struct {
	done chan struct{}
	list TraceList
	err  error
}

func pinTraceDir(dir string) (*traceDir, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("-trace-dir %s: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("-trace-dir %s: %w", dir, err)
	}
	id, err := root.Stat(".")
	if err != nil {
		_ = root.Close() // already failing
		return nil, fmt.Errorf("-trace-dir %s: %w", dir, err)
	}
	return &traceDir{path: real, root: root, id: id}, nil
}

// check reports an error unless the path still names the directory pinned at start.
func (t *traceDir) check() error {
	fi, err := os.Lstat(t.path)
	if err != nil || !os.SameFile(fi, t.id) {
		return fmt.Errorf("%w: %s is no longer the directory the agent pinned at start (replaced, or swapped for a symlink); restart the agent if that is intended",
			errTraceDirMoved, t.path)
	}
	return nil
}

// shared answers the scan under way, or starts one: at most MaxConcurrentListings scans run, however many
// listings are asked for.
func (t *traceDir) shared(ctx context.Context) (TraceList, error) {
	t.mu.Lock()
	sc := t.scan
	if sc == nil {
		sc = &traceScan{done: make(chan struct{})}
		t.scan = sc
		go func() {
			sc.list, sc.err = t.list(MaxTraces)
			t.mu.Lock()
			t.scan = nil
			t.mu.Unlock()
			close(sc.done)
		}()
	}
	t.mu.Unlock()
	select {
	case <-sc.done:
		return sc.list, sc.err
	case <-ctx.Done():
		return TraceList{}, ctx.Err()
	}
}

// list reads the directory in batches and keeps the newest keep regular trace files, newest first.
func (t *traceDir) list(keep int) (TraceList, error) {
	out := TraceList{Dir: t.path, Traces: []Trace{}, MaxBytes: MaxTraceBytes}
	if err := t.check(); err != nil {
		return out, err
	}
	d, err := t.root.Open(".")
	if err != nil {
		return out, err
	}
	defer d.Close()
	h := &newestTraces{}
	for {
		batch, err := d.ReadDir(TraceListBatch)
		for _, e := range batch {
			// Regular files only: a symlink in the directory could point anywhere on the host.
			if !e.Type().IsRegular() || !traceName.MatchString(e.Name()) {
				continue
			}
			fi, err := t.root.Lstat(e.Name())
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			tr := traceFile{name: e.Name(), size: fi.Size(), mod: fi.ModTime()}
			switch {
			case h.Len() < keep:
				heap.Push(h, tr)
			case tr.newer((*h)[0]):
				(*h)[0] = tr
				heap.Fix(h, 0)
				out.Truncated = true
			default:
				out.Truncated = true
			}
		}
		if errors.Is(err, io.EOF) || len(batch) == 0 {
			break
		}
		if err != nil {
			return out, err
		}
	}
	files := *h
	sort.Slice(files, func(i, j int) bool { return files[i].newer(files[j]) })
	for _, f := range files {
		out.Traces = append(out.Traces, Trace{Name: f.name, Size: f.size, Modified: stamp(f.mod)})
	}
	return out, nil
}

// traceFile is one listed file.
type traceFile struct {
	name string
	size int64
	mod  time.Time
}

// newer orders by modification time, then name, so the listing is stable.
func (a traceFile) newer(b traceFile) bool {
	if !a.mod.Equal(b.mod) {
		return a.mod.After(b.mod)
	}
	return a.name > b.name
}

// newestTraces is a min-heap by age: its root is the oldest of the files kept.
type newestTraces []traceFile

func (h newestTraces) Len() int           { return len(h) }
func (h newestTraces) Less(i, j int) bool { return h[j].newer(h[i]) }
func (h newestTraces) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *newestTraces) Push(x any)        { *h = append(*h, x.(traceFile)) }
func (h *newestTraces) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (s *Server) listTraces(w http.ResponseWriter, r *http.Request) {
	if s.traces == nil {
		httpjson.Error(w, http.StatusNotFound, ErrProfilingOff.Error())
		return
	}
	list, err := s.traces.shared(r.Context())
	switch {
	case r.Context().Err() != nil:
		return // the caller went away
	case errors.Is(err, errTraceDirMoved):
		s.cfg.Audit.Error("trace listing refused", "user", userOf(r), "remote", r.RemoteAddr, "error", err)
		httpjson.Error(w, http.StatusConflict, err.Error())
	case err != nil:
		httpjson.Error(w, http.StatusInternalServerError, fmt.Sprintf("cannot read the trace directory: %v", err))
	default:
		httpjson.Write(w, http.StatusOK, list)
	}
}

// getTrace streams one trace file: a regular file directly in the pinned trace directory, at most MaxTraceBytes,
// within TraceDownloadTimeout.
func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) {
	if s.traces == nil {
		httpjson.Error(w, http.StatusNotFound, ErrProfilingOff.Error())
		return
	}
	name := r.PathValue("name")
	if !traceName.MatchString(name) {
		httpjson.Error(w, http.StatusBadRequest, "a trace name is one file name of letters, digits, '.', '_', '+' and '-'")
		return
	}
	if err := s.traces.check(); err != nil {
		s.cfg.Audit.Error("trace download refused", "user", userOf(r), "remote", r.RemoteAddr, "trace", name, "error", err)
		httpjson.Error(w, http.StatusConflict, err.Error())
		return
	}
	root := s.traces.root
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		httpjson.Error(w, http.StatusNotFound, "no trace named "+strconv.Quote(name))
		return
	case err != nil:
		httpjson.Error(w, http.StatusInternalServerError, err.Error())
		return
	case !fi.Mode().IsRegular():
		httpjson.Error(w, http.StatusForbidden, strconv.Quote(name)+" is not a regular file")
		return
	}
	f, err := root.Open(name) // os.Root never leaves the directory, whatever is swapped in after the Lstat
	if err != nil {
		httpjson.Error(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		httpjson.Error(w, http.StatusForbidden, strconv.Quote(name)+" is not a regular file")
		return
	}
	if fi.Size() > MaxTraceBytes {
		httpjson.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("%s is %d bytes, over the %d-byte download limit: copy it from %s on the host",
			name, fi.Size(), MaxTraceBytes, s.traces.path))
		return
	}
	size := fi.Size()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(TraceDownloadTimeout))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.WriteHeader(http.StatusOK)
	// The file may grow while it is sent (vLLM still writing): send the size announced, never more.
	n, err := io.CopyN(w, f, size)
	if err != nil {
		s.cfg.Audit.Error("trace download cut", "user", userOf(r), "remote", r.RemoteAddr, "trace", name, "bytes", n, "of", size, "error", err)
		return
	}
	s.cfg.Audit.Info("trace downloaded", "user", userOf(r), "remote", r.RemoteAddr, "trace", name, "bytes", size)
}
