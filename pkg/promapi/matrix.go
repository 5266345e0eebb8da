package promapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// parseValue reads a sample's value as Prometheus writes it: a float, NaN or ±Inf; a whole number of up to 15
// digits (counts, most gauges) without strconv.
func parseValue(b []byte) (float64, error) {
	if len(b) > 0 && len(b) <= 15 {
		n, i := int64(0), 0
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			n = n*10 + int64(b[i]-'0')
		}
		if i == len(b) {
			return float64(n), nil
		}
	}
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
