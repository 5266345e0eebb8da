package promtest

import (
	"flag"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// serve makes this test binary a minimal server: it listens on the address given, answers every request 200, and
// exits 1 when the address is taken, as Prometheus does.
var serve = flag.String("promtest.serve", "", "listen on this address and answer 200 (a server for startProc's test)")

func TestMain(m *testing.M) {
	flag.Parse()
	if *serve != "" {
		l, err := net.Listen("tcp", *serve)
		if err != nil {
			os.Exit(1)
		}
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// TestStartProcRetriesTakenAddress: another process takes the address freeAddr found before the server listens on
// it; the server exits, and startProc starts it again on another address instead of waiting out its minute.
func TestStartProcRetriesTakenAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0") // it never answers: a readiness probe there waits and fails
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	calls := 0
	newAddr = func(t testing.TB) string {
		if calls++; calls == 1 {
			return taken.Addr().String()
		}
		return freeAddr(t)
	}
	defer func() { newAddr = freeAddr }()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var tried []string
	p := startProc(t, "server", dir, exe, 1, func(addrs []string) []string {
		tried = append(tried, addrs[0])
		return []string{"-promtest.serve=" + addrs[0]}
	}, "/ready")
	if len(tried) != 2 || tried[0] != taken.Addr().String() || p.addr() != tried[1] {
		t.Fatalf("tried %v, running on %s: want the taken address, then another", tried, p.addr())
	}
	if _, err := os.Stat(filepath.Join(dir, "server.2.log")); err != nil {
		t.Errorf("the second try's log: %v", err)
	}
	resp, err := http.Get("http://" + p.addr() + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}
