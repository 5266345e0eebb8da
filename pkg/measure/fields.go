package measure

import "slices"

// Field is a query field (its JSON name) a measure reads besides queryType, measure and legendFormat; the catalog
// lists each entry's, and the editors show exactly those.
type Field string

// Query fields.
const (
	FieldEndpoint       Field = "endpoint"
	FieldModel          Field = "model"
	FieldEngine         Field = "engine"
	FieldRole           Field = "role"
	FieldGroupBy        Field = "groupBy"
	FieldLimit          Field = "limit"   // the series kept per output, by their mean over the range
	FieldRank           Field = "rank"    // which end of the ranking limit keeps
	FieldBuckets        Field = "buckets" // bounds of a distribution across series (a heatmap) instead of the series
	FieldWindow         Field = "window"
	FieldFamily         Field = "family" // the latency family, in the query's metric field
	FieldQuantiles      Field = "quantiles"
	FieldThreshold      Field = "threshold"
	FieldHeadroom       Field = "headroom"
	FieldScore          Field = "score"
	FieldOutput         Field = "output" // one output of a measure that has several: an alert rule compares one number
	FieldMetric         Field = "metric" // a raw query's metric name
	FieldLabels         Field = "labels"
	FieldHistogram      Field = "histogram"
	FieldExpr           Field = "expr"
	FieldPeakTFLOPS     Field = "peakTflops"
	FieldPeakMemoryTBps Field = "peakMemoryTBps"
)

// FieldOrder is the order fields are listed in.
var FieldOrder = []Field{FieldEndpoint, FieldModel, FieldEngine, FieldRole, FieldGroupBy, FieldLimit, FieldRank, FieldBuckets, FieldFamily, FieldMetric,
	FieldLabels, FieldHistogram, FieldQuantiles, FieldThreshold, FieldHeadroom, FieldScore, FieldOutput, FieldWindow, FieldExpr,
	FieldPeakTFLOPS, FieldPeakMemoryTBps}

// filters are the fields of every query that reads series: the matchers and the grouping.
var filters = []Field{FieldEndpoint, FieldModel, FieldEngine, FieldRole}

// Group says how series are aggregated before they are returned (the query's groupBy).
type Group string

// Aggregation levels.
const (
	GroupEngine   Group = "engine"   // one series per endpoint and engine / DP rank (default)
	GroupEndpoint Group = "endpoint" // one series per endpoint
	GroupModel    Group = "model"    // one series per model_name across endpoints
	GroupFleet    Group = "fleet"    // one series for everything selected
	// GroupRole is one series per prefill/decode role (pkg/role), answered by the data source over the modes.
	GroupRole Group = "role"
)

// Groups are the aggregation levels in the editor's order.
var Groups = []Group{GroupEngine, GroupEndpoint, GroupModel, GroupFleet, GroupRole}

// Code is one value of an output whose numbers stand for states (engine_state, a LoRA adapter's state).
type Code struct {
	Value int    `json:"value"`
	Name  string `json:"name"`
}

// EngineStates are engine_state's codes.
var EngineStates = []Code{{StateOnline, "online"}, {StateAsleep, "asleep"}, {StateUnhealthy, "unhealthy"}}

// LoRAStates are a LoRA adapter's state codes (LoRAState).
var LoRAStates = []Code{{2, "running"}, {1, "waiting"}}

// fill sets the fields, requirements and groupings the catalog lists for an entry, from its formulas.
func (e *Entry) fill() {
	fields := slices.Clone(e.Fields)
	if len(e.Outputs) > 0 || e.Type == TypeDiagnosis {
		fields = append(fields, filters...)
	}
	groups := slices.Clone(Groups)
	for _, o := range e.Outputs {
		Walk(o.Node, func(n Node) {
			s := shapeOf(n)
			fields = append(fields, s.fields...)
			if s.groups != nil {
				groups = slices.DeleteFunc(groups, func(g Group) bool { return !slices.Contains(s.groups, g) })
			}
		})
	}
	if len(e.Outputs) > 0 {
		fields = append(fields, FieldGroupBy, FieldLimit, FieldRank, FieldBuckets)
		e.GroupBy = groups
	}
	if len(e.Outputs) > 1 && !slices.Contains(fields, FieldScore) { // a score already picks one of dp_balance's
		fields = append(fields, FieldOutput)
	}
	e.Fields = nil
	for _, f := range FieldOrder {
		if slices.Contains(fields, f) {
			e.Fields = append(e.Fields, f)
		}
	}
	for _, r := range []Field{FieldThreshold, FieldMetric, FieldExpr} {
		// A threshold has no default; a raw query names its metric, a promql query its expression.
		if slices.Contains(e.Fields, r) && !slices.Contains(e.Required, r) {
			e.Required = append(e.Required, r)
		}
	}
}

func init() {
	for _, e := range Catalog {
		e.fill()
	}
}
