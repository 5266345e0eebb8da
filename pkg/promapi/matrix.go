package promapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
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

// pointBudget counts the points of one query's answers against query.MaxPointsPerQuery, shared by the requests of
// a split range query.
type pointBudget struct{ used atomic.Int64 }

// take counts n more points and reports whether they fit.
func (b *pointBudget) take(n int) bool { return b.used.Add(int64(n)) <= query.MaxPointsPerQuery }

// decodeMatrixWithin reads {"resultType":"matrix","result":[…]} series by series, stopping (with errStop and
// truncated set) once query.MaxSeriesPerQuery series are held or budget has no room for a series' points.
func decodeMatrixWithin(dec *json.Decoder, budget *pointBudget) (m model.Matrix, truncated bool, err error) {
	err = decodeResult(dec, "matrix", func() error {
		if len(m) >= query.MaxSeriesPerQuery {
			truncated = true
			return errStop
		}
		var s series
		if err := dec.Decode(&s); err != nil {
			return err
		}
		if !budget.take(len(s.Values)) {
			truncated = true
			return errStop
		}
		metric := make(model.Metric, len(s.Metric))
		for k, v := range s.Metric {
			metric[model.LabelName(k)] = model.LabelValue(v)
		}
		m = append(m, &model.SampleStream{Metric: metric, Values: s.Values})
		return nil
	})
	return m, truncated, err
}

// decodeVectorStream reads {"resultType":"vector"|"scalar","result":…} sample by sample, stopping at
// query.MaxSeriesPerQuery samples.
func decodeVectorStream(dec *json.Decoder) (v model.Vector, truncated bool, err error) {
	err = decodeResult(dec, "vector", func() error {
		if len(v) >= query.MaxSeriesPerQuery {
			truncated = true
			return errStop
		}
		var s model.Sample
		if err := dec.Decode(&s); err != nil {
			return err
		}
		v = append(v, &s)
		return nil
	}, func(raw json.RawMessage) error {
		var s model.Scalar
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		v = model.Vector{{Metric: model.Metric{}, Value: s.Value, Timestamp: s.Timestamp}}
		return nil
	})
	return v, truncated, err
}

// decodeResult walks a data object, calling each for every element of its result array; a scalar result (an
// array that is one [time, "value"] pair) goes to scalar when given. resultType must be want (or scalar).
func decodeResult(dec *json.Decoder, want string, each func() error, scalar ...func(json.RawMessage) error) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	var resultType string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case "resultType":
			if err := dec.Decode(&resultType); err != nil {
				return err
			}
			if resultType != want && !(resultType == "scalar" && len(scalar) > 0) {
				return fmt.Errorf("result type %s is not a %s", resultType, want)
			}
		case "result":
			if resultType == "scalar" && len(scalar) > 0 {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				if err := scalar[0](raw); err != nil {
					return err
				}
				continue
			}
			if err := expectDelim(dec, '['); err != nil {
				return err
			}
			for dec.More() {
				if err := each(); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
		}
	}
	_, err := dec.Token()
	return err
}
