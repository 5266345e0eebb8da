package query

import (
	"fmt"
	"time"
)

// Resolution is the step, rate window and step-aligned range both modes evaluate a query at: step =
// max(interval, scrape interval, range ÷ maxDataPoints) in whole seconds, window = max(step + scrape,
// 4 × scrape) unless the query sets one, and from/to aligned down to multiples of step as Grafana does for
// Prometheus, so direct and Prometheus mode compute values at the same instants.
func Resolution(q Query, r Request, scrapeInterval time.Duration) (step, window time.Duration, from, to time.Time, err error) {
	scrape := scrapeInterval.Milliseconds()
	if scrape <= 0 {
		scrape = 5000
	}
	f, t := r.From.UnixMilli(), r.To.UnixMilli()
	if t < f {
		return 0, 0, time.Time{}, time.Time{}, fmt.Errorf("time range ends (%s) before it starts (%s)", r.To.Format(time.RFC3339), r.From.Format(time.RFC3339))
	}
	s := max(r.Interval.Milliseconds(), scrape)
	if r.MaxDataPoints > 0 {
		s = max(s, (t-f)/r.MaxDataPoints)
	}
	s = (s + 999) / 1000 * 1000 // whole seconds, as Grafana's Prometheus data source asks
	w := max(s+scrape, 4*scrape)
	if q.Window != "" {
		if d, err := q.WindowDuration(); err == nil {
			w = d.Milliseconds()
		}
	}
	return time.Duration(s) * time.Millisecond, time.Duration(w) * time.Millisecond,
		time.UnixMilli(f / s * s), time.UnixMilli(t / s * s), nil
}

// FormatQuantile is how a quantile appears in the quantile label: 0.95, 0.5, 0.999.
func FormatQuantile(q float64) string { return formatQuantile(q) }
