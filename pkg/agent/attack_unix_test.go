//go:build unix

package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestSymbolsFIFO puts a FIFO at the symbols path and asks for the report 200 times at once: each answers at once
// that the path is not a regular file, and the process's OS threads stay bounded (a blocking open would pin one
// per request).
func TestSymbolsFIFO(t *testing.T) {
	a := newTestAgent(t, newFakeVLLM(t), func(c *Config) { c.Rate, c.Burst = 1e6, 1e6 })
	fifo := filepath.Join(a.dir, "service_metrics_symbols.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, release readers blocked on the FIFO when the test ends, so the old code's hang ends too.
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			_ = w.Close()
		}
	})
	before := pprof.Lookup("threadcreate").Count()
	c := clientFrom("127.0.0.1")
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := []string{}
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := do(t, c, "GET", a.URL+PathSymbols, testToken, "")
			if code != http.StatusOK || !strings.Contains(body, "not a regular file") {
				mu.Lock()
				bad = append(bad, body)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Errorf("%d of 200 requests did not answer that the FIFO is not a regular file, e.g. %.200s", len(bad), bad[0])
	}
	if grown := pprof.Lookup("threadcreate").Count() - before; grown > 64 {
		t.Errorf("%d OS threads were created for 200 requests at a FIFO", grown)
	}
}
