package exposition

import (
	"iter"
	"strings"
)

// Format is an exposition text format.
type Format uint8

// Formats understood by Parse. The zero value asks Parse to detect the format.
const (
	// FormatAuto means OpenMetrics if the body's last line is "# EOF", else text.
	FormatAuto Format = iota
	// FormatText is the Prometheus text format 0.0.4.
	FormatText
	// FormatOpenMetrics is OpenMetrics 1.0 text.
	FormatOpenMetrics
)

// String returns a short name of the format.
func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatOpenMetrics:
		return "openmetrics"
	default:
		return "auto"
	}
}

// Type is the metric type of a family as declared by its TYPE line.
type Type uint8

// Metric types. TypeUntyped is what a text-format family without TYPE line
// gets; TypeUnknown is OpenMetrics' name for the same thing.
const (
	TypeUntyped Type = iota
	TypeCounter
	TypeGauge
	TypeHistogram
	TypeGaugeHistogram
	TypeSummary
	TypeInfo
	TypeStateset
	TypeUnknown
)

var typeNames = [...]string{
	TypeUntyped:        "untyped",
	TypeCounter:        "counter",
	TypeGauge:          "gauge",
	TypeHistogram:      "histogram",
	TypeGaugeHistogram: "gaugehistogram",
	TypeSummary:        "summary",
	TypeInfo:           "info",
	TypeStateset:       "stateset",
	TypeUnknown:        "unknown",
}

// String returns the type's keyword as written in a TYPE line.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "invalid"
}

// Scrape is one parsed exposition body.
type Scrape struct {
	// Format is the format the body was parsed as (never FormatAuto).
	Format Format
	// Families in order of first appearance (HELP, TYPE, UNIT or sample
	// line). Families known only from metadata have no samples.
	Families []Family

	index map[string]int32
	// held is what Parse stored the scrape in, for Release.
	held *held
}

// Family is a metric family: its metadata and all its samples.
type Family struct {
	// Name is the family name: the name in its HELP/TYPE lines, or the sample
	// name for families without metadata. In OpenMetrics a counter family is
	// named without its _total suffix.
	Name string
	Help string
	Type Type
	// Unit comes from an OpenMetrics UNIT line.
	Unit string
	// Samples in exposition order. For histograms and summaries they include
	// the _bucket, _sum, _count (and in OpenMetrics _created, _gsum, _gcount)
	// series; counters in OpenMetrics include _total and _created.
	Samples []Sample
}

// Sample is one exposition line's series and value.
type Sample struct {
	// Name is the full series name, e.g. "vllm:e2e_request_latency_seconds_bucket".
	Name   string
	Labels Labels
	Value  float64
	// TimestampMs is the sample's explicit timestamp in milliseconds since the
	// epoch (OpenMetrics seconds are converted); valid if HasTimestamp.
	TimestampMs  int64
	HasTimestamp bool
}

// Add appends a family to the scrape and indexes it, e.g. a synthetic one such as up that a scraper records.
func (s *Scrape) Add(f Family) {
	if s.index == nil {
		s.index = map[string]int32{}
	}
	s.index[f.Name] = int32(len(s.Families)) // #nosec G115 -- a scrape's families come from a body of at most 1 GiB (maxBodyMB), so their count fits in int32
	s.Families = append(s.Families, f)
}

// Family returns the family with exactly this name, or nil.
func (s *Scrape) Family(name string) *Family {
	if i, ok := s.index[name]; ok {
		return &s.Families[i]
	}
	return nil
}

// FamilyOf returns the family that holds series with this sample name, e.g.
// the histogram "foo" for "foo_bucket" or, in OpenMetrics, the counter "foo"
// for "foo_total". It returns nil if there is none.
func (s *Scrape) FamilyOf(sampleName string) *Family {
	if f := s.Family(sampleName); f != nil {
		return f
	}
	for _, sfx := range suffixes {
		base, ok := strings.CutSuffix(sampleName, sfx.suffix)
		if !ok {
			continue
		}
		if f := s.Family(base); f != nil && sfx.allows(s.Format, f.Type) {
			return f
		}
	}
	return nil
}

// Series yields the samples whose Name is exactly name, whichever family
// holds them, so callers need not know how the format groups families.
func (s *Scrape) Series(name string) iter.Seq[*Sample] {
	return func(yield func(*Sample) bool) {
		f := s.FamilyOf(name)
		if f == nil {
			return
		}
		for i := range f.Samples {
			if f.Samples[i].Name == name && !yield(&f.Samples[i]) {
				return
			}
		}
	}
}

// NumSamples returns the number of samples over all families.
func (s *Scrape) NumSamples() int {
	n := 0
	for i := range s.Families {
		n += len(s.Families[i].Samples)
	}
	return n
}

// Key returns the series identity in Prometheus notation, e.g.
// `foo_bucket{engine="0",le="0.5"}`, with labels sorted by name.
func (s *Sample) Key() string {
	return s.Name + s.Labels.Key()
}
