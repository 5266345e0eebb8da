package query

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/derive"
	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// AttainmentNotice says how an SLO attainment at the query's threshold reads a histogram with these bucket bounds,
// the same in both modes: nothing when the threshold is a bound; interpolated inside its bucket, or read at the
// highest finite bound past the last one, otherwise — with the vLLM --custom-histogram-buckets setting that makes
// it exact, where vLLM owns the histogram.
func AttainmentNotice(q Query, sig vllm.Signal, bounds []float64) string {
	if q.Threshold == nil || len(bounds) == 0 || len(sig.Names) == 0 {
		return ""
	}
	t := *q.Threshold
	b := derive.BoundsAround(bounds, t)
	if b.Exact {
		return ""
	}
	name, ts := sig.Names[0], strconv.FormatFloat(t, 'g', -1, 64)
	var s string
	if math.IsInf(b.Hi, 1) {
		s = fmt.Sprintf("SLO attainment at %s: %s has no bucket bound above %s, so the share shown is the share at or below %s, a lower bound",
			ts, name, strconv.FormatFloat(b.Lo, 'g', -1, 64), strconv.FormatFloat(b.Lo, 'g', -1, 64))
	} else {
		s = fmt.Sprintf("SLO attainment at %s is interpolated inside the %s–%s bucket of %s, as histogram_quantile does",
			ts, strconv.FormatFloat(b.Lo, 'g', -1, 64), strconv.FormatFloat(b.Hi, 'g', -1, 64), name)
	}
	family, ok := vllm.BucketFamily[sig.ID]
	if !ok {
		return s + "; a bucket bound at " + ts + " would make it exact"
	}
	exact := []string{}
	for _, x := range slices.Sorted(slices.Values(append(slices.Clone(bounds), t))) {
		if !math.IsInf(x, 1) {
			exact = append(exact, strconv.FormatFloat(x, 'g', -1, 64))
		}
	}
	return fmt.Sprintf(`%s; vLLM --custom-histogram-buckets '{"%s": [%s]}' makes it exact`, s, family, strings.Join(exact, ", "))
}
