package promapi

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/prometheus/common/model"
)

// decodeMatrix decodes a whole data object as the client's stream does.
func decodeMatrix(data []byte) (model.Matrix, error) {
	m, _, err := decodeMatrixWithin(json.NewDecoder(bytes.NewReader(data)), new(pointBudget))
	return m, err
}

func TestDecodeMatrixMatchesModel(t *testing.T) {
	body := []byte(`{"resultType":"matrix","result":[{"metric":{"instance":"a:1","engine":"0"},"values":[[1700000000,"1.5"],[1700000005.25,"-2e-3"],[1700000010,"+Inf"],[1700000015,"-Inf"]]},{"metric":{},"values":[]}]}`)
	got, err := decodeMatrix(body)
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Result model.Matrix `json:"result"`
	}
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0], want.Result[0]) || len(got[1].Values) != 0 {
		t.Errorf("got %v, want %v", got, want.Result)
	}
	nan, err := decodeMatrix([]byte(`{"result":[{"metric":{},"values":[[1,"NaN"]]}]}`))
	if err != nil || !math.IsNaN(float64(nan[0].Values[0].Value)) {
		t.Errorf("NaN: %v %v", nan, err)
	}
	for _, bad := range []string{`{"result":[{"values":[[1]]}]}`, `{"result":[{"values":[[1,"x"]]}]}`, `{"result":[{"values":{}}]}`, `{"resultType":"vector","result":[]}`} {
		if _, err := decodeMatrix([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func BenchmarkDecodeMatrix(b *testing.B) {
	// 64 series × 721 samples: a 1-hour range at a 5 s step.
	var result []map[string]any
	for i := 0; i < 64; i++ {
		vals := make([][]any, 721)
		for s := range vals {
			vals[s] = []any{1700000000 + 5*s, strconv.FormatFloat(float64(s*i)*1.37, 'g', -1, 64)}
		}
		result = append(result, map[string]any{"metric": map[string]string{"instance": strconv.Itoa(i)}, "values": vals})
	}
	body, _ := json.Marshal(map[string]any{"resultType": "matrix", "result": result})
	b.ReportAllocs()
	b.Run("decodeMatrixWithin", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := decodeMatrix(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("model.Matrix", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var r struct {
				Result model.Matrix `json:"result"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
