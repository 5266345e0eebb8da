package sim

import (
	"bytes"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var testStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testConfig is Default with the given changes applied.
func testConfig(mod func(*Config)) Config {
	c := Default()
	if mod != nil {
		mod(&c)
	}
	return c
}

func newTestFleet(t testing.TB, cfg Config) *Fleet {
	t.Helper()
	f, err := NewFleet(cfg, testStart)
	if err != nil {
		t.Fatalf("NewFleet: %v", err)
	}
	return f
}

func render(t testing.TB, f *Fleet) string {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteExposition(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// parse decodes an exposition with the strict reference parser, failing the test on any error.
func parse(t testing.TB, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("expfmt rejected the exposition: %v\n%s", err, head(text, 40))
	}
	return fams
}

func head(s string, lines int) string {
	parts := strings.SplitN(s, "\n", lines+1)
	if len(parts) > lines {
		parts = parts[:lines]
	}
	return strings.Join(parts, "\n")
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func labelNames(m *dto.Metric) []string {
	var out []string
	for _, l := range m.GetLabel() {
		out = append(out, l.GetName())
	}
	sort.Strings(out)
	return out
}

// seriesKey identifies a metric within its family by its sorted labels.
func seriesKey(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// value returns the single number a gauge, counter or untyped metric carries.
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	default:
		return m.GetUntyped().GetValue()
	}
}

// find returns the metric of fam whose labels include all of want, or nil.
func find(fam *dto.MetricFamily, want map[string]string) *dto.Metric {
	if fam == nil {
		return nil
	}
next:
	for _, m := range fam.GetMetric() {
		got := labelMap(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// sumOver adds up a family's values over the metrics matching want.
func sumOver(fam *dto.MetricFamily, want map[string]string) float64 {
	if fam == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range fam.GetMetric() {
		got := labelMap(m)
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		if m.Histogram != nil {
			total += float64(m.GetHistogram().GetSampleCount())
		} else {
			total += value(m)
		}
	}
	return total
}
