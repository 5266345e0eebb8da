package promapi

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// span is one request of a split range query: the steps from start to end (both on the query's step grid).
type span struct{ start, end time.Time }

// splitRange cuts the steps start, start+step, …, ≤ end at multiples of query.SplitInterval since the epoch (a
// longer multiple when that would make more than query.MaxSplits requests), as Thanos's and Cortex's query
// frontends split by day: each span holds the steps from one boundary to before the next. A range within one
// interval, or a step as long as the interval, is not split. Every step of a range query is evaluated on its own,
// so the spans' answers joined are the whole range's.
func splitRange(start, end time.Time, step time.Duration) []span {
	whole := []span{{start, end}}
	s, e, st := start.UnixMilli(), end.UnixMilli(), step.Milliseconds()
	every := query.SplitInterval.Milliseconds()
	if st <= 0 || st >= every || e-s <= every {
		return whole
	}
	// Boundaries crossed: multiples of every in (s, e]; widen every until they make at most MaxSplits spans.
	for n := floorDiv(e, every) - floorDiv(s, every); n+1 > query.MaxSplits; n = floorDiv(e, every) - floorDiv(s, every) {
		every *= (n + query.MaxSplits) / query.MaxSplits
	}
	var out []span
	for from := s; from <= e; {
		next := (floorDiv(from, every) + 1) * every // the next boundary after from
		// The last step before next: from + k·step < next.
		to := from + (next-1-from)/st*st
		if to > e {
			to = e - (e-from)%st
		}
		out = append(out, span{time.UnixMilli(from), time.UnixMilli(to)})
		from = to + st
	}
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// splittable reports whether an expression may be evaluated span by span: not when it names the query's own
// start or end (@ start(), @ end()), which would then be each span's.
func splittable(expr string) bool { return !strings.Contains(expr, "@") }

// queryRangeSplit runs a range query as the spans of splitRange, at most query.SplitConcurrency at once, and joins
// their answers series by series; the first failure cancels the others and is the query's error.
func (c *Client) queryRangeSplit(ctx context.Context, expr string, spans []span, step time.Duration) (model.Matrix, []string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := new(pointBudget)
	results := make([]model.Matrix, len(spans))
	warns := make([][]string, len(spans))
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, query.SplitConcurrency)
	for i, sp := range spans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			m, w, err := c.queryRange(ctx, expr, sp.start, sp.end, step, budget)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				return
			}
			results[i], warns[i] = m, w
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = &Error{Message: c.transportMessage(ctx, ctx.Err())}
	}
	if firstErr != nil {
		var all []string
		for _, w := range warns {
			all = append(all, w...)
		}
		return nil, all, firstErr
	}
	m, truncated := joinSpans(results)
	var all []string
	seen := map[string]bool{}
	for _, ws := range warns {
		for _, w := range ws {
			if !seen[w] {
				seen[w] = true
				all = append(all, w)
			}
		}
	}
	if truncated && !seen[TruncatedWarning] {
		all = append(all, TruncatedWarning)
	}
	return m, all, nil
}

// joinSpans joins the answers of consecutive spans: each series' points in time order, in an array of exactly their
// number (the results cache keeps them and counts them so), series in order of first appearance, cut at
// query.MaxSeriesPerQuery series (truncated). A series that only one span holds keeps that span's values.
func joinSpans(parts []model.Matrix) (model.Matrix, bool) {
	var out model.Matrix
	// Series are matched by their labels' fingerprint, their labels compared where fingerprints collide: keying them
	// by Metric.String (fmt's quoting of every label) was a third of a warm refresh's CPU in Prometheus mode.
	index := map[model.Fingerprint][]int{}
	at := make([][]int, len(parts)) // each part's series' index in out, -1 for those cut
	var total []int                 // per series of out, its points in every span
	truncated := false
	for i, m := range parts {
		at[i] = make([]int, len(m))
		for k, s := range m {
			fp := s.Metric.Fingerprint()
			j := slices.IndexFunc(index[fp], func(j int) bool { return out[j].Metric.Equal(s.Metric) })
			if j >= 0 {
				j = index[fp][j]
				at[i][k] = j
				total[j] += len(s.Values)
				continue
			}
			if len(out) >= query.MaxSeriesPerQuery {
				at[i][k] = -1
				truncated = true
				continue
			}
			at[i][k] = len(out)
			index[fp] = append(index[fp], len(out))
			total = append(total, len(s.Values))
			out = append(out, &model.SampleStream{Metric: s.Metric})
		}
	}
	for i, m := range parts {
		for k, s := range m {
			j := at[i][k]
			if j < 0 || len(s.Values) == 0 {
				continue
			}
			o := out[j]
			switch {
			case o.Values == nil && len(s.Values) == total[j]:
				o.Values = s.Values
			case o.Values == nil:
				o.Values = make([]model.SamplePair, 0, total[j])
				fallthrough
			default:
				o.Values = append(o.Values, s.Values...)
			}
		}
	}
	return out, truncated
}
