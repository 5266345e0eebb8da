package query

import (
	"fmt"
	"time"
)

// Range is the step, rate window and step-aligned range both modes evaluate a query at, and the notice to show
// when the step had to be raised to keep every series within MaxPointsPerSeries.
type Range struct {
	Step, Window time.Duration
	From, To     time.Time
	Notice       string
}

// maxStep bounds the step (and so the window) far below where milliseconds × 10⁶ overflow a time.Duration.
const maxStep = 100 * 365 * 24 * time.Hour

// maxAbsTimestamp bounds request timestamps (ms) so that from − window − lookback and to − from cannot overflow.
const maxAbsTimestamp = int64(1) << 61

// DefaultScrapeInterval is the scrape interval of a data source that names none (pkg/datasource), and what the
// engine assumes when it is given none.
const DefaultScrapeInterval = 5 * time.Second

// ResolveRange computes a query's Range: step = max(interval, scrape interval, range ÷ maxDataPoints) in whole
// seconds, raised further when the range would hold more than MaxPointsPerSeries steps (as Grafana and
// Prometheus do); window = max(step + scrape, 4 × scrape) unless the query sets one; from/to aligned down to
// multiples of step as Grafana does for Prometheus, so direct and Prometheus mode compute values at the same
// instants.
func ResolveRange(q Query, r Request, scrapeInterval time.Duration) (Range, error) {
	scrape := scrapeInterval.Milliseconds()
	if scrape <= 0 {
		scrape = DefaultScrapeInterval.Milliseconds()
	}
	f, t := r.From.UnixMilli(), r.To.UnixMilli()
	if t < f {
		return Range{}, Invalid(fmt.Errorf("time range ends (%s) before it starts (%s)", r.To.Format(time.RFC3339), r.From.Format(time.RFC3339)))
	}
	if f < -maxAbsTimestamp || t > maxAbsTimestamp {
		return Range{}, Invalid(fmt.Errorf("time range %d–%d ms is outside the supported timestamps", f, t))
	}
	span := t - f
	s := max(min(r.Interval.Milliseconds(), maxStep.Milliseconds()), scrape)
	if r.MaxDataPoints > 0 {
		s = max(s, span/r.MaxDataPoints)
	}
	s = wholeSeconds(s) // as Grafana's Prometheus data source asks
	var notice string
	if stepCount(f, t, s) > MaxPointsPerSeries {
		requested := s
		s = wholeSeconds(ceilDiv(span, MaxPointsPerSeries-1))
		if stepCount(f, t, s) > MaxPointsPerSeries {
			s = wholeSeconds(ceilDiv(span, MaxPointsPerSeries-2)) // alignment can add one step
		}
		if s > maxStep.Milliseconds() {
			return Range{}, Invalid(fmt.Errorf("time range of %s is too long: at most %d points of at most %s each",
				time.Duration(span)*time.Millisecond, MaxPointsPerSeries, maxStep))
		}
		notice = fmt.Sprintf("step raised from %s to %s: a series holds at most %d points, as in Prometheus; shorten the range for finer steps",
			time.Duration(requested)*time.Millisecond, time.Duration(s)*time.Millisecond, MaxPointsPerSeries)
	}
	w := max(s+scrape, 4*scrape)
	if q.Window != "" {
		if d, err := q.WindowDuration(); err == nil {
			w = d.Milliseconds()
		}
	}
	return Range{Step: time.Duration(s) * time.Millisecond, Window: time.Duration(w) * time.Millisecond,
		From: time.UnixMilli(f / s * s), To: time.UnixMilli(t / s * s), Notice: notice}, nil
}

// stepCount is how many steps derive.Steps yields for from..to aligned to step.
func stepCount(from, to, step int64) int64 { return (to/step*step-from/step*step)/step + 1 }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func wholeSeconds(ms int64) int64 { return max(ceilDiv(ms, 1000), 1) * 1000 }

// FormatQuantile is how a quantile appears in the quantile label: 0.95, 0.5, 0.999.
func FormatQuantile(q float64) string { return formatQuantile(q) }
