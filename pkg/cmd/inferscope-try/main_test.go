package main

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
	"github.com/inferscope/inferscope-vllm/pkg/internal/simtest"
)

// TestTryAnswersFromTheBuiltDataSource runs the command as the README's "Try it without Docker" does: the built
// executable over a simulator, every default query answered with values.
func TestTryAnswersFromTheBuiltDataSource(t *testing.T) {
	exe := harness.Executable(t, harness.DatasourceExecutable)
	url := simtest.Start(t, "-engines=2", "-speed=30", "-qps=8")
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
