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

// Legend expands {{label}} in a legend format, as Grafana's Prometheus data source does.
func Legend(format string, labels map[string]string) string {
	return legendVar.ReplaceAllStringFunc(format, func(m string) string {
		return labels[strings.TrimSpace(m[2:len(m)-2])]
	})
}
