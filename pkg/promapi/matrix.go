package promapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/prometheus/common/model"
)

// series is one range-query result series, decoded faster than model.SampleStream: a 1-hour, 64-series
// answer holds ~46 000 [time, "value"] pairs, and decoding each through reflection costs more than the query.
type series struct {
	Metric map[string]string `json:"metric"`
	Values samples           `json:"values"`
}

type samples []model.SamplePair

// UnmarshalJSON parses [[1700000000.123,"1.5"],…] by hand.
func (s *samples) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return fmt.Errorf("values are not an array")
	}
	out := make([]model.SamplePair, 0, bytes.Count(b, []byte{'"'})/2)
	b = b[1 : len(b)-1]
	for {
		b = bytes.TrimLeft(b, " \t\r\n,")
		if len(b) == 0 {
			break
		}
		end := bytes.IndexByte(b, ']')
		if b[0] != '[' || end < 0 {
			return fmt.Errorf("sample is not [time, \"value\"]")
		}
		pair := b[1:end]
		b = b[end+1:]
		comma := bytes.IndexByte(pair, ',')
		if comma < 0 {
			return fmt.Errorf("sample is not [time, \"value\"]")
		}
		ts, err := strconv.ParseFloat(string(bytes.TrimSpace(pair[:comma])), 64)
		if err != nil {
			return fmt.Errorf("sample time: %w", err)
		}
		vs := bytes.Trim(bytes.TrimSpace(pair[comma+1:]), `"`)
		v, err := parseValue(vs)
		if err != nil {
			return fmt.Errorf("sample value: %w", err)
		}
		out = append(out, model.SamplePair{Timestamp: model.Time(math.Round(ts * 1000)), Value: model.SampleValue(v)})
	}
	*s = out
	return nil
}

func parseValue(b []byte) (float64, error) {
	switch string(b) {
	case "NaN":
		return math.NaN(), nil
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(string(b), 64)
}

// decodeMatrix reads a query_range result into model.Matrix.
func decodeMatrix(data json.RawMessage) (model.Matrix, error) {
	var r struct {
		ResultType string   `json:"resultType"`
		Result     []series `json:"result"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.ResultType != "" && r.ResultType != "matrix" {
		return nil, fmt.Errorf("result type %s is not a matrix", r.ResultType)
	}
	m := make(model.Matrix, len(r.Result))
	for i, s := range r.Result {
		metric := make(model.Metric, len(s.Metric))
		for k, v := range s.Metric {
			metric[model.LabelName(k)] = model.LabelValue(v)
		}
		m[i] = &model.SampleStream{Metric: metric, Values: s.Values}
	}
	return m, nil
}
