package vllm

import (
	"fmt"
	"strconv"
	"strings"
)

// Main is the release name of vLLM's main branch: names found there and in no tag are unreleased. The commit read is
// MainCommit.
const Main = "main"

// MainCommit is the vLLM main commit the table's "main" column was read from (2026-08-04, through CentML/vllm, a
// fork that tracks vllm-project/vllm's tags and main).
const MainCommit = "4f819f801b7702e39d9588cc9f2ecd28560b31f5"

// VLLMReleasesRead is which vLLM tags the provenance table was read at, and through which forks (README).
var VLLMReleasesRead = "every tag from 0.6.0 to 0.20.1 through CentML/vllm, every final tag from 0.20.2 to 0.25.1 " +
	"(2026-05-07 to 2026-07-12: 0.20.2, 0.21.0, 0.22.0, 0.22.1, 0.23.0, 0.24.0, 0.25.0, 0.25.1) through aoshen02/vllm, " +
	"and main at `" + MainCommit[:12] + "` through CentML/vllm"

// SimRelease is a vLLM release the simulator speaks: Short is what its -vllm-version flag takes, Tag the release.
type SimRelease struct{ Short, Tag string }

// SimReleases are the releases the simulator can impersonate exactly, oldest first; 0.6 runs the V0 engine.
var SimReleases = []SimRelease{
	{"0.6", "0.6.6"}, {"0.10", "0.10.2"}, {"0.11", "0.11.0"}, {"0.13", "0.13.0"},
	{"0.16", "0.16.0"}, {"0.20", "0.20.1"}, {"0.24", "0.24.0"}, {"0.25", "0.25.1"}, {Main, Main},
}

// ResolveSimRelease turns "0.20", "0.20.1", "v0.20.1" or "main" into the release tag the simulator speaks.
func ResolveSimRelease(s string) (string, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	var names []string
	for _, r := range SimReleases {
		if t == r.Short || t == r.Tag {
			return r.Tag, nil
		}
		names = append(names, r.Short)
	}
	return "", fmt.Errorf("unknown vLLM version %q (want one of %s)", s, strings.Join(names, ", "))
}

// V0Release reports whether a release is simulated with the V0 engine (vllm/engine/metrics.py): before 0.8, when
// V1 became the default.
func V0Release(release string) bool { return CompareReleases(release, "0.8.0") < 0 }

// CompareReleases orders two release names ("0.11.2", "main"); main is newer than every tag.
func CompareReleases(a, b string) int {
	if a == b {
		return 0
	}
	if a == Main {
		return 1
	}
	if b == Main {
		return -1
	}
	pa, pb := releaseParts(a), releaseParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func releaseParts(r string) [3]int {
	var out [3]int
	for i, p := range strings.SplitN(strings.TrimPrefix(r, "v"), ".", 3) {
		n, err := strconv.Atoi(p)
		if err != nil {
			return [3]int{-1, -1, -1}
		}
		out[i] = n
	}
	return out
}

// finishReasons are the finished_reason values V1's request_success pre-creates (FINISH_REASON_STRINGS of
// vllm/v1/engine/__init__.py), from the release that first has each list.
var finishReasons = []struct {
	since   string
	reasons []string
}{
	{"0.7.0", []string{"stop", "length", "abort"}},
	{"0.13.0", []string{"stop", "length", "abort", "error"}},
	{"0.17.0", []string{"stop", "length", "abort", "error", "repetition"}},
}

// FinishReasons returns the finished_reason values a V1 release pre-creates on vllm:request_success.
func FinishReasons(release string) []string {
	out := finishReasons[0].reasons
	for _, f := range finishReasons {
		if CompareReleases(release, f.since) >= 0 {
			out = f.reasons
		}
	}
	return out
}

// NewestRelease is the newest vLLM tag the provenance table was read at.
func NewestRelease() string {
	newest := ""
	for _, r := range SimReleases {
		if r.Tag != Main && (newest == "" || CompareReleases(r.Tag, newest) > 0) {
			newest = r.Tag
		}
	}
	return newest
}

// NextPatch is the release after r in its minor series ("0.25.1" gives "0.25.2"), r itself when it is not a tag.
func NextPatch(r string) string {
	p := releaseParts(r)
	if p[0] < 0 {
		return r
	}
	return fmt.Sprintf("%d.%d.%d", p[0], p[1], p[2]+1)
}

// IterationTokensComputedSince is the first release whose vllm:iteration_tokens_total observes a step's computed
// prompt tokens (prompt_token_stats.computed: prefix-cache hits and KV pulled from a peer left out) plus its generated
// tokens; before it, every prompt token of the prefills the step completed (vllm/v1/metrics/loggers.py).
const IterationTokensComputedSince = "0.23.0"
