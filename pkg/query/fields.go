package query

import "github.com/inferscope/inferscope-vllm/pkg/measure"

// MaxHeadroom is the largest headroom a capacity query may keep free.
const MaxHeadroom = 0.9

// FieldSpec is how a query field is bounded and defaulted, for Validate and, through the generated catalog, the
// editors.
type FieldSpec struct {
	Name measure.Field `json:"name"`
	// Min and Max bound a number (each number of a list); MinExclusive makes Min itself invalid.
	Min          *float64 `json:"min,omitempty"`
	Max          *float64 `json:"max,omitempty"`
	MinExclusive bool     `json:"minExclusive,omitempty"`
	// MaxItems bounds a list (quantiles) or a map (labels); MaxBytes a text.
	MaxItems int `json:"maxItems,omitempty"`
	MaxBytes int `json:"maxBytes,omitempty"`
	// Default is what Validate fills in when the field is empty.
	Default any `json:"default,omitempty"`
	// Values are the values a choice may take.
	Values []string `json:"values,omitempty"`
	// Regex marks fields that hold a regular expression, anchored as PromQL's =~.
	Regex bool `json:"regex,omitempty"`
	// Settings marks fields the data source fills from its settings rather than the query editor.
	Settings bool `json:"settings,omitempty"`
}

func bound(v float64) *float64 { return &v }

// FieldSpecs are every measure.Field's bounds and default, in measure.FieldOrder.
var FieldSpecs = []FieldSpec{
	{Name: measure.FieldEndpoint, MaxBytes: MaxMatcherBytes, Regex: true},
	{Name: measure.FieldModel, MaxBytes: MaxMatcherBytes, Regex: true},
	{Name: measure.FieldEngine, MaxBytes: MaxMatcherBytes, Regex: true},
	{Name: measure.FieldRole, MaxBytes: MaxMatcherBytes, Regex: true},
	{Name: measure.FieldGroupBy, Default: GroupEngine},
	{Name: measure.FieldLimit, Min: bound(0), Max: bound(MaxLimit)},
	{Name: measure.FieldRank, Values: []string{RankHighest, RankLowest}},
	{Name: measure.FieldBuckets, MaxItems: MaxBuckets},
	{Name: measure.FieldFamily, Default: measure.DefaultFamily},
	{Name: measure.FieldMetric, MaxBytes: MaxTextBytes},
	{Name: measure.FieldLabels, MaxItems: MaxLabelMatchers, MaxBytes: MaxMatcherBytes},
	{Name: measure.FieldHistogram, Default: HistogramBuckets, Values: []string{HistogramBuckets, HistogramQuantiles}},
	{Name: measure.FieldQuantiles, Min: bound(0), Max: bound(1), MaxItems: MaxQuantiles, Default: DefaultQuantiles},
	{Name: measure.FieldThreshold, Min: bound(0), MinExclusive: true},
	{Name: measure.FieldHeadroom, Min: bound(0), Max: bound(MaxHeadroom), Default: DefaultHeadroom},
	{Name: measure.FieldScore, Values: measure.Scores},
	{Name: measure.FieldOutput, MaxBytes: MaxTextBytes},
	{Name: measure.FieldWindow, MaxBytes: MaxTextBytes},
	{Name: measure.FieldExpr, MaxBytes: MaxExprBytes},
	{Name: measure.FieldPeakTFLOPS, Min: bound(MinPeak), Max: bound(MaxPeak), Settings: true},
	{Name: measure.FieldPeakMemoryTBps, Min: bound(MinPeak), Max: bound(MaxPeak), Settings: true},
}
