package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
	"github.com/inferscope/inferscope-vllm/pkg/symbols"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// localTimeout bounds the agent's own calls to the local vLLM for the symbols report.
const localTimeout = 5 * time.Second

// Symbols is the symbols file checked against the running vLLM and its /metrics.
type Symbols struct {
	Path string `json:"path"`
	// Exists is false when there is no file: the profiler then records its built-in metrics only.
	Exists   bool   `json:"exists"`
	Modified string `json:"modified,omitempty"`
	// Error is why the file could not be read or parsed as a list of entries.
	Error string `json:"error,omitempty"`
	// VLLMVersion is what vLLM's /version answered; VersionError why it could not be read.
	VLLMVersion  string `json:"vllmVersion,omitempty"`
	VersionError string `json:"versionError,omitempty"`
	// MetricsError is why /metrics could not be read (then Exposed is empty).
	MetricsError string `json:"metricsError,omitempty"`
	symbols.Checked
	// RestartNeeded reminds that the profiler reads the file when vLLM starts.
	RestartNeeded bool `json:"restartNeeded"`
}

func (s *Server) getSymbols(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Symbols == "" {
		httpjson.Error(w, http.StatusNotFound, "this agent manages no symbols file (start it with -symbols)")
		return
	}
	rep := Symbols{Path: s.cfg.Symbols, RestartNeeded: true, Checked: symbols.Checked{Entries: []symbols.Entry{}, Problems: []symbols.Problem{}}}
	doc, mod, err := readBounded(s.cfg.Symbols, symbols.MaxFileBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		httpjson.Write(w, http.StatusOK, rep)
		return
	case err != nil:
		rep.Exists, rep.Error = true, err.Error()
		httpjson.Write(w, http.StatusOK, rep)
		return
	}
	rep.Exists, rep.Modified = true, stamp(mod)
	entries, err := symbols.Parse(doc)
	if err != nil {
		rep.Error = err.Error()
		httpjson.Write(w, http.StatusOK, rep)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), localTimeout)
	defer cancel()
	rep.VLLMVersion, err = s.vllmVersion(ctx)
	if err != nil {
		rep.VersionError = err.Error()
	}
	names, err := s.profilingNames(ctx)
	if err != nil {
		rep.MetricsError = err.Error()
	}
	rep.Checked = symbols.Check(entries, rep.VLLMVersion, names)
	httpjson.Write(w, http.StatusOK, rep)
}

// readBounded reads a regular file of at most limit bytes; it opens without blocking and checks the file is
// regular before reading, so a FIFO or device at the path answers an error at once.
func readBounded(path string, limit int64) ([]byte, time.Time, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if !fi.Mode().IsRegular() {
		return nil, time.Time{}, fmt.Errorf("%s is not a regular file", path)
	}
	doc, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	if int64(len(doc)) > limit {
		return nil, time.Time{}, fmt.Errorf("%s is over %d bytes", path, limit)
	}
	return doc, fi.ModTime(), nil
}

// vllmVersion reads {"version": "..."} from vLLM's /version.
func (s *Server) vllmVersion(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.cfg.VLLM, "/")+"/version", nil)
	if err != nil {
		return "", err
	}
	res, err := s.cfg.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("vLLM's /version did not answer: %w", unwrapURL(err))
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("vLLM's /version answered %s", res.Status)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 4096)).Decode(&v); err != nil || v.Version == "" {
		return "", errors.New(`vLLM's /version is not {"version": "..."}`)
	}
	clean := vllm.CleanVersion(v.Version)
	if clean == "" {
		return "", fmt.Errorf("vLLM's /version is not a release name (at most %d letters, digits, '.', '+', '-' and '_')", vllm.MaxVersionLen)
	}
	return clean, nil
}

// profilingNames are the vllm_profiling_* sample names of vLLM's /metrics.
func (s *Server) profilingNames(ctx context.Context) (map[string]bool, error) {
	res, err := exposition.Fetch(ctx, s.cfg.Client, strings.TrimRight(s.cfg.VLLM, "/")+"/metrics", exposition.ScrapeOptions{
		Timeout: localTimeout,
		Parse:   exposition.ParseOptions{Keep: func(f string) bool { return strings.HasPrefix(f, symbols.MetricPrefix) }},
	})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, f := range res.Scrape.Families {
		for _, smp := range f.Samples {
			names[smp.Name] = true
		}
	}
	return names, nil
}
