package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

// startSim serves a simulated vLLM V1 deployment with two engines, 30× faster than real time, on loopback.
func startSim(t *testing.T) string {
	t.Helper()
	cfg, err := sim.ParseArgs([]string{"-engines=2", "-speed=30", "-qps=8", "-addr=127.0.0.1:0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(cfg, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("simulator: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/metrics"
}

// TestTryAnswersFromTheBuiltDataSource runs the command as the README's "Try it without Docker" does: the built
// executable over a simulator, every default query answered with values.
func TestTryAnswersFromTheBuiltDataSource(t *testing.T) {
	exe := harness.Executable(t, harness.DatasourceExecutable)
	url := startSim(t)
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := run(ctx, []string{"-datasource", exe, "-endpoint", url, "-wait", "90s"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	text := out.String()
	if !strings.HasPrefix(text, "Save & test: OK\n1 of 1 endpoint(s) reachable, 2 engine(s)") {
		t.Errorf("health check not reported first:\n%s", text)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  kv_usage\{endpoint=127\.0\.0\.1:\d+, engine=1, model_name=\S+\}\s+last = [0-9.e+-]+ \(percent\)$`),
		regexp.MustCompile(`(?m)^  generation_tokens_per_second\{endpoint=[^}]*engine=0[^}]*\}\s+last = [0-9.e+-]+ \(short\)$`),
		regexp.MustCompile(`(?m)^  ttft\{[^}]*quantile=0\.95\}\s+last = [0-9.e+-]+ \(s\)$`),
		regexp.MustCompile(`(?m)^  waiting\{[^}]*engine=1[^}]*\}\s+last = \d+ \(short\)$`),
		regexp.MustCompile(`(?m)^E \{"queryType":"diagnosis"\}$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("output lacks %s:\n%s", want, text)
		}
	}
	if strings.Contains(text, "(no data yet)") || strings.Contains(text, "error:") {
		t.Errorf("a query went unanswered:\n%s", text)
	}
}

func TestTryRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-query", "{not json"}, "is not JSON"},
		{[]string{"-datasource", "/nonexistent/gpx"}, "build the backends first"},
		{[]string{"stray"}, "unexpected arguments"},
	} {
		err := run(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}
