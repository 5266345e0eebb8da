package exposition

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// This file turns both parsers' output into one canonical form so tests can
// compare them: per family a sorted list of "name{sorted labels} value"
// strings, where le/quantile are re-formatted from their float value.

type canonFamily struct {
	Type    Type
	Help    string
	Samples []string
}

func canonValue(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	if v == 0 {
		return "0" // expfmt turns -0 counts into an unsigned 0
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func canonSample(name string, labels []Label, special string, specialValue float64, value float64, ts *int64) string {
	ls := slices.Clone(labels)
	if special != "" {
		ls = append(ls, Label{Name: special, Value: canonValue(specialValue)})
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	var b strings.Builder
	b.WriteString(strconv.Quote(name))
	b.WriteByte('{')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q=%q", l.Name, l.Value)
	}
	b.WriteString("} ")
	b.WriteString(canonValue(value))
	if ts != nil {
		fmt.Fprintf(&b, " @%d", *ts)
	}
	return b.String()
}

var dtoTypes = map[dto.MetricType]Type{
	dto.MetricType_COUNTER:         TypeCounter,
	dto.MetricType_GAUGE:           TypeGauge,
	dto.MetricType_UNTYPED:         TypeUntyped,
	dto.MetricType_SUMMARY:         TypeSummary,
	dto.MetricType_HISTOGRAM:       TypeHistogram,
	dto.MetricType_GAUGE_HISTOGRAM: TypeGaugeHistogram,
}

func dtoLabels(m *dto.Metric) []Label {
	var ls []Label
	for _, lp := range m.GetLabel() {
		ls = append(ls, Label{Name: lp.GetName(), Value: lp.GetValue()})
	}
	return ls
}

// parseExpfmt runs the reference parser; a panic counts as a rejection.
func parseExpfmt(data []byte) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("expfmt panicked: %v", r)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(data))
}

func canonExpfmt(fams map[string]*dto.MetricFamily) map[string]canonFamily {
	out := map[string]canonFamily{}
	for name, mf := range fams {
		cf := canonFamily{Type: dtoTypes[mf.GetType()], Help: strings.TrimSuffix(mf.GetHelp(), "\r")}
		for _, m := range mf.GetMetric() {
			ls := dtoLabels(m)
			var ts *int64
			if m.TimestampMs != nil {
				ts = m.TimestampMs
			}
			add := func(s string) { cf.Samples = append(cf.Samples, s) }
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add(canonSample(name, ls, "", 0, m.GetCounter().GetValue(), ts))
			case dto.MetricType_GAUGE:
				add(canonSample(name, ls, "", 0, m.GetGauge().GetValue(), ts))
			case dto.MetricType_UNTYPED:
				add(canonSample(name, ls, "", 0, m.GetUntyped().GetValue(), ts))
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add(canonSample(name, ls, "quantile", q.GetQuantile(), q.GetValue(), nil))
				}
				if s.SampleSum != nil {
					add(canonSample(name+"_sum", ls, "", 0, s.GetSampleSum(), nil))
				}
				if s.SampleCount != nil {
					add(canonSample(name+"_count", ls, "", 0, float64(s.GetSampleCount()), nil))
				}
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					v := float64(b.GetCumulativeCount())
					if b.CumulativeCountFloat != nil {
						v = b.GetCumulativeCountFloat()
					}
					add(canonSample(name+"_bucket", ls, "le", b.GetUpperBound(), v, nil))
				}
				if h.SampleSum != nil {
					add(canonSample(name+"_sum", ls, "", 0, h.GetSampleSum(), nil))
				}
				if h.SampleCountFloat != nil {
					add(canonSample(name+"_count", ls, "", 0, h.GetSampleCountFloat(), nil))
				} else if h.SampleCount != nil {
					add(canonSample(name+"_count", ls, "", 0, float64(h.GetSampleCount()), nil))
				}
			}
		}
		sort.Strings(cf.Samples)
		out[name] = cf
	}
	return out
}

// isUint reports whether expfmt would store v as an unsigned integer.
func isUint(v float64) bool { return v == float64(uint64(v)) }

// canonOurs mirrors what expfmt keeps: the last _sum/_count per series (for
// histograms, its integral/non-integral split), summary counts truncated to
// unsigned, and the zero count expfmt invents for a histogram with
// non-integral buckets but no _count line. Empty families are dropped, as
// expfmt drops them.
func canonOurs(s *Scrape) map[string]canonFamily {
	out := map[string]canonFamily{}
	for fi := range s.Families {
		f := &s.Families[fi]
		if len(f.Samples) == 0 {
			continue
		}
		cf := canonFamily{Type: f.Type, Help: f.Help}
		add := func(str string) { cf.Samples = append(cf.Samples, str) }
		switch f.Type {
		case TypeHistogram, TypeGaugeHistogram:
			// expfmt keeps the last integral and the last non-integral
			// _count separately and prefers the latter; with non-integral
			// buckets and no _count it reports 0.
			g := groupSeries(f, "le")
			type counts struct {
				uint, float    *float64
				sum            *float64
				anyFloatBucket bool
			}
			cs := make([]counts, len(g.labels))
			for i := range f.Samples {
				smp, c := &f.Samples[i], &cs[g.of[i]]
				v := smp.Value
				switch roleOf(smp.Name, f.Name) {
				case roleBucket:
					le, _ := parseFloat(smp.Labels.Get("le"))
					add(canonSample(f.Name+"_bucket", g.labels[g.of[i]], "le", le, v, nil))
					c.anyFloatBucket = c.anyFloatBucket || !isUint(v)
				case roleSum:
					c.sum = &v
				case roleCount:
					if isUint(v) {
						c.uint = &v
					} else {
						c.float = &v
					}
				}
			}
			for k, c := range cs {
				ls := g.labels[k]
				if c.sum != nil {
					add(canonSample(f.Name+"_sum", ls, "", 0, *c.sum, nil))
				}
				switch {
				case c.float != nil:
					add(canonSample(f.Name+"_count", ls, "", 0, *c.float, nil))
				case c.uint != nil:
					add(canonSample(f.Name+"_count", ls, "", 0, *c.uint, nil))
				case c.anyFloatBucket:
					add(canonSample(f.Name+"_count", ls, "", 0, 0, nil))
				}
			}
		case TypeSummary:
			for _, sm := range f.Summaries() {
				for _, q := range sm.Quantiles {
					add(canonSample(f.Name, sm.Labels, "quantile", q.Quantile, q.Value, nil))
				}
				if sm.HasSum {
					add(canonSample(f.Name+"_sum", sm.Labels, "", 0, sm.Sum, nil))
				}
				if sm.HasCount {
					add(canonSample(f.Name+"_count", sm.Labels, "", 0, float64(uint64(sm.Count)), nil))
				}
			}
		default:
			for i := range f.Samples {
				smp := &f.Samples[i]
				var ts *int64
				if smp.HasTimestamp {
					ts = &smp.TimestampMs
				}
				add(canonSample(smp.Name, smp.Labels, "", 0, smp.Value, ts))
			}
		}
		sort.Strings(cf.Samples)
		out[f.Name] = cf
	}
	return out
}

// diffCanon returns a description of the first differences, or "".
func diffCanon(want, got map[string]canonFamily) string {
	var b strings.Builder
	names := map[string]bool{}
	for n := range want {
		names[n] = true
	}
	for n := range got {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		w, wok := want[n]
		g, gok := got[n]
		switch {
		case !wok:
			fmt.Fprintf(&b, "family %q: unexpected\n", n)
		case !gok:
			fmt.Fprintf(&b, "family %q: missing\n", n)
		default:
			if w.Type != g.Type {
				fmt.Fprintf(&b, "family %q: type %v, want %v\n", n, g.Type, w.Type)
			}
			if w.Help != g.Help {
				fmt.Fprintf(&b, "family %q: help %q, want %q\n", n, g.Help, w.Help)
			}
			if !slices.Equal(w.Samples, g.Samples) {
				fmt.Fprintf(&b, "family %q: samples differ:\n got  %q\n want %q\n", n, g.Samples, w.Samples)
			}
		}
		if b.Len() > 4000 {
			break
		}
	}
	return b.String()
}
