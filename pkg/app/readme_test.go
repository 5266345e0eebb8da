package app

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/agent"
	"github.com/inferscope/inferscope-vllm/pkg/symbols"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

var update = flag.Bool("update", false, "rewrite the README's generated agent limits")

const (
	readmePath  = "../../README.md"
	limitsBegin = "<!-- agent-limits:begin (generated from pkg/agent and pkg/app by `go test ./pkg/app -run AgentLimitsREADME -update`) -->\n"
	limitsEnd   = "<!-- agent-limits:end -->\n"
)

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

// dur shows a duration as the README writes them: "30 s", "2 min".
func dur(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmt.Sprintf("%d s", d/time.Second)
}

// renderAgentLimits states the profiler agent's and the app's agent limits from the constants that enforce them.
func renderAgentLimits() string {
	var b strings.Builder
	b.WriteString(limitsBegin)
	fmt.Fprintf(&b, `
**The profiler agent** (`+"`pkg/agent`"+`; the app's side in `+"`pkg/app`"+`), as enforced:
- Authentication comes first: every route but `+"`/healthz`"+` needs the token (at least %d characters, its SHA-256
  compared in constant time). Then each caller has its own budget: the token holder %d requests/s with bursts of
  %d, for reads and for changes (switches, profile starts and stops) separately, so no load of reads starves a
  change (`+"`-rate`, `-burst`"+`); a source address without a valid token %d/s with bursts of %d answered 401, 429
  beyond; `+"`/healthz`"+` %d/s with bursts of %d per source address. At most %d addresses are tracked (the rest
  share one budget). Refused requests are counted and summed up in one audit line per %s, never one line each.
- Bodies at most %d KiB of strict JSON; a torch profile 1–%d s; each call to vLLM's profiler at most %s. A failed
  stop is retried after %s, doubling up to %s, until vLLM stops or the agent exits; the profile's state shows the
  pending stop. On SIGTERM the agent drains requests under way for up to %s, then waits for a start under way and
  stops a profile that is running or was starting, for up to %s.
- `+"`-trace-dir`"+` is pinned at start (an `+"`os.Root`"+` and the directory's identity, compared on every use): a
  directory replaced or swapped for a symlink is refused (409). A listing reads the directory %d entries at a
  time and keeps the newest %d in a bounded heap; %d scan runs at a time and listings asked for meanwhile share it.
  A download is at most %s within %s; one cut short is logged as cut, and in the app it is an error, never a 200
  with fewer bytes.
- The symbols file is opened non-blocking and read only if it is a regular file of at most %d KiB; vLLM's
  `+"`/version`"+` is shown only as a release name of at most %d letters, digits, `+"`.+-_`"+` (the rule the data
  source's scraper uses).
- The app caches and coalesces its read-only agent calls and `+"`/metrics`"+` exposure checks per instance for %s
  (concurrent identical calls share one), runs at most %d at once and holds at most %d trace downloads at once; it
  waits %s for a profile start or stop (longer than the agent's own vLLM deadline) and sets Go's soft memory limit
  to %s (an operator's `+"`GOMEMLIMIT`"+` wins). Every string an agent or a `+"`/metrics`"+` URL answers, error or
  not, is scrubbed of the app's secrets (agent tokens, client key, every secure setting) by `+"`pkg/redact`"+`.
`,
		agent.MinTokenLength, agent.DefaultRate, agent.DefaultBurst, agent.RefusedRate, agent.RefusedBurst,
		agent.HealthRate, agent.HealthBurst, agent.MaxTrackedAddresses, dur(agent.RefusedSummaryInterval),
		agent.MaxBodyBytes>>10, agent.MaxProfileSeconds, dur(agent.VLLMCallTimeout), dur(agent.StopRetryFirst), dur(agent.StopRetryMax),
		agent.DrainTimeout, dur(agent.ShutdownTimeout),
		agent.TraceListBatch, agent.MaxTraces, agent.MaxConcurrentListings, mib(agent.MaxTraceBytes), dur(agent.TraceDownloadTimeout),
		symbols.MaxFileBytes>>10, vllm.MaxVersionLen,
		ReadCacheTTL, MaxConcurrentReads, MaxConcurrentDownloads, dur(agent.ProfileClientTimeout), mib(MemoryLimit))
	b.WriteString(limitsEnd)
	return b.String()
}

// TestAgentLimitsREADME fails when the README's statement of the agent's limits is out of step with the constants;
// -update rewrites it.
func TestAgentLimitsREADME(t *testing.T) {
	doc, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, limitsBegin), strings.Index(s, limitsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q … %q block", strings.TrimSpace(limitsBegin), strings.TrimSpace(limitsEnd))
	}
	want := renderAgentLimits()
	if got := s[i : j+len(limitsEnd)]; got != want {
		if *update {
			if err := os.WriteFile(readmePath, []byte(s[:i]+want+s[j+len(limitsEnd):]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's agent limits are out of date; run go test ./pkg/app -run AgentLimitsREADME -update")
	}
}
