package query

import (
	"regexp"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
)

// Frames turns a result into one time series frame per output — the multi-frame shape Grafana's Prometheus data
// source returns, which panels, Explore and alert rules (reduce/threshold expressions) all accept.
func Frames(q Query, res *Result) data.Frames {
	if len(q.Buckets) > 0 || q.ReadsBuckets() {
		return withNotices(heatmapFrames(q, res), q, res)
	}
	frames := make(data.Frames, 0, len(res.Outputs))
	for _, o := range res.Outputs {
		times := make([]time.Time, len(o.Points))
		values := make([]float64, len(o.Points))
		for i, p := range o.Points {
			times[i] = time.UnixMilli(p.T).UTC()
			values[i] = p.V
		}
		value := data.NewField(o.Measure, data.Labels(o.Labels), values)
		value.Config = &data.FieldConfig{Unit: o.Unit}
		if q.LegendFormat != "" {
			value.Config.DisplayNameFromDS = Legend(q.LegendFormat, o.Labels)
		}
		f := data.NewFrame(o.Measure, data.NewField(data.TimeSeriesTimeFieldName, nil, times), value)
		f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTimeSeriesMulti, TypeVersion: data.FrameTypeVersion{0, 1}})
		frames = append(frames, f)
	}
	return withNotices(frames, q, res)
}

// withNotices puts a result's notices on the first frame, adding an empty one where nothing matched.
func withNotices(frames data.Frames, q Query, res *Result) data.Frames {
	if len(frames) == 0 {
		// An empty frame still carries notices and tells Grafana (and alerting's "no data") that nothing matched.
		f := data.NewFrame(string(q.QueryType))
		f.SetMeta(&data.FrameMeta{Type: data.FrameTypeTimeSeriesMulti, TypeVersion: data.FrameTypeVersion{0, 1}})
		frames = append(frames, f)
	}
	for _, n := range res.Notices {
		frames[0].Meta.Notices = append(frames[0].Meta.Notices, data.Notice{Severity: data.NoticeSeverityWarning, Text: n})
	}
	return frames
}

var legendVar = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// HeatmapRowsType is Grafana's frame type for a heatmap's rows: a time field, then one field per bucket in order.
const HeatmapRowsType data.FrameType = "heatmap-rows"

// heatmapFrames turns a distribution (ApplyDistribution) into one heatmap-rows frame per measure and quantile, each
// bucket a field named by its upper bound, as Grafana's Prometheus data source returns le buckets to its heatmap.
func heatmapFrames(q Query, res *Result) data.Frames {
	var frames data.Frames
	for i := 0; i < len(res.Outputs); {
		first := res.Outputs[i]
		times := make([]time.Time, len(first.Points))
		for j, p := range first.Points {
			times[j] = time.UnixMilli(p.T).UTC()
		}
		name := first.Measure
		if qt := first.Labels["quantile"]; qt != "" {
			name += " p" + qt
		}
		f := data.NewFrame(name, data.NewField(data.TimeSeriesTimeFieldName, nil, times))
		for ; i < len(res.Outputs) && sameRows(res.Outputs[i], first); i++ {
			o := res.Outputs[i]
			values := make([]float64, len(o.Points))
			for j, p := range o.Points {
				values[j] = p.V
			}
			v := data.NewField(o.Labels["le"], data.Labels(o.Labels), values)
			v.Config = &data.FieldConfig{Unit: o.Unit, DisplayNameFromDS: o.Labels["le"]}
			f.Fields = append(f.Fields, v)
		}
		f.SetMeta(&data.FrameMeta{Type: HeatmapRowsType})
		frames = append(frames, f)
	}
	return frames
}

// sameRows reports whether two outputs are rows of one heatmap: the same measure and labels but le.
func sameRows(a, b Output) bool {
	if a.Measure != b.Measure || len(a.Labels) != len(b.Labels) {
		return false
	}
	for k, v := range a.Labels {
		if w, ok := b.Labels[k]; k != "le" && (!ok || w != v) {
			return false
		}
	}
	return true
}

// Legend expands {{label}} in a legend format, as Grafana's Prometheus data source does.
func Legend(format string, labels map[string]string) string {
	return legendVar.ReplaceAllStringFunc(format, func(m string) string {
		return labels[strings.TrimSpace(m[2:len(m)-2])]
	})
}
