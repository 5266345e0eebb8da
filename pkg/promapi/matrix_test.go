package promapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// scanAnswer reads a whole range-query answer as the client's queryRange does, through a buffer of 16 bytes (the
// smallest bufio allows), so that values cross its refills.
func scanAnswer(body []byte, budget *pointBudget) (model.Matrix, envelope, bool, error) {
	return scanAnswerFrom(bufio.NewReaderSize(bytes.NewReader(body), 16), budget)
}

// scanAnswerFrom reads a whole range-query answer from br.
func scanAnswerFrom(br *bufio.Reader, budget *pointBudget) (model.Matrix, envelope, bool, error) {
	var env envelope
	var m model.Matrix
	var truncated bool
	s := newScanner(br)
	err := s.envelope(&env, func() (err error) {
		m, truncated, err = s.matrix(budget)
		return err
	})
	return m, env, truncated, err
}

// modelAnswer is the same answer read by encoding/json into Prometheus's own types: the reference.
type modelAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string       `json:"resultType"`
		Result     model.Matrix `json:"result"`
	} `json:"data"`
	Warnings  []string `json:"warnings"`
	Infos     []string `json:"infos"`
	IsPartial bool     `json:"isPartial"`
}

// sameMatrix compares two matrices value by value, NaN equal to NaN.
func sameMatrix(a, b model.Matrix) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Metric.Equal(b[i].Metric) || len(a[i].Values) != len(b[i].Values) {
			return false
		}
		for j, p := range a[i].Values {
			q := b[i].Values[j]
			if p.Timestamp != q.Timestamp || math.Float64bits(float64(p.Value)) != math.Float64bits(float64(q.Value)) &&
				!(math.IsNaN(float64(p.Value)) && math.IsNaN(float64(q.Value))) {
				return false
			}
		}
	}
	return true
}

// TestScannerMatchesEncodingJSON: answers with escapes (surrogate pairs, lone surrogates, \/), every envelope field,
// unknown members of any shape, native histograms beside the values and any whitespace read as encoding/json reads
// them into Prometheus's own types.
func TestScannerMatchesEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"instance":"a:1","engine":"0"},"values":[[1700000000,"1.5"],[1700000005.25,"-2e-3"],[1700000010,"+Inf"],[1700000015,"-Inf"],[1700000020,"NaN"]]},{"metric":{},"values":[]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[]},"warnings":["a store was left out","\u00e9\ud83d\ude00 \/ \"q\" \\ \b\f\n\r\t"],"infos":["PromQL info: x"]}`,
		`{"status":"success","isPartial":true,"data":{"result":[{"metric":{"model_name":"m\ud800x","le":"+Inf"},"values":[[1.5,"0"]]}],"resultType":"matrix","stats":{"timings":{"evalTotalTime":0.01,"x":[1,{"y":null}],"z":false}}}}`,
		"{ \"status\" : \"success\" ,\n\t\"data\" : { \"resultType\" : \"matrix\" , \"result\" : [ { \"values\" : [ [ 1 , \"2\" ] ] , \"metric\" : { \"a\" : \"b\" } , \"histograms\" : [ [ 1 , { \"count\" : \"1\" } ] ] } ] } }\r\n",
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1","a":"2"},"values":[[1,"1"]]}]},"isPartial":null,"extra":[[[]],{},-1.5e-3,true]}`,
	} {
		var want modelAnswer
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%s: the reference refuses it: %v", body, err)
		}
		got, env, truncated, err := scanAnswer([]byte(body), new(pointBudget))
		if err != nil || truncated {
			t.Errorf("%s: %v (truncated %v)", body, err, truncated)
			continue
		}
		if !sameMatrix(got, want.Data.Result) {
			t.Errorf("%s:\nscanned %v\nwant    %v", body, got, want.Data.Result)
		}
		if env.Status != want.Status || env.IsPartial != want.IsPartial || strings.Join(env.Warnings, "|") != strings.Join(want.Warnings, "|") ||
			strings.Join(env.Infos, "|") != strings.Join(want.Infos, "|") {
			t.Errorf("%s: envelope %+v, want %+v", body, env, want)
		}
	}
}

// TestScannerRefusesMalformedAnswers: broken, truncated, mistyped and hostile answers are errors, never a panic or
// a wrong matrix; an error answer's message is read.
func TestScannerRefusesMalformedAnswers(t *testing.T) {
	for _, body := range []string{
		``, `{`, `[]`, `{"status":"success","data":{"result":[{"values":[[1]]}]}}`,
		`{"data":{"result":[{"values":[[1,"x"]]}]}}`, `{"data":{"result":[{"values":{}}]}}`,
		`{"data":{"resultType":"vector","result":[]}}`, `{"data":{"result":[{"metric":{"a":1},"values":[]}]}}`,
		`{"data":{"result":[{"values":[[1,"1"],]}]}}`, `{"data":{"result":[{"values":[[1,"1"]]}]}`,
		`{"data":{"result":[{"values":[["1","1"]]}]}}`, `{"data":{"result":[{"values":[[1e300,"1"]]}]}}`,
		`{"data":{"result":[{"metric":{"a":"\x01"},"values":[]}]}}`, `{"data":{"result":[{"metric":{"a":"\q"},"values":[]}]}}`,
		`{"data":{"result":[{"metric":{"a":"\u12"},"values":[]}]}}`, `{"warnings":["a",3]}`, `{"isPartial":"yes"}`,
		`{"x":tru}`, `{"x":+1}`, `{"x":` + strings.Repeat("[", maxDepth+10) + strings.Repeat("]", maxDepth+10) + `}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,"1"]]}]}} trailing`[:60],
	} {
		if m, _, _, err := scanAnswer([]byte(body), new(pointBudget)); err == nil {
			t.Errorf("%.80s: no error, matrix %v", body, m)
		}
	}
	_, env, _, err := scanAnswer([]byte(`{"status":"error","errorType":"bad_data","error":"parse error at char 3: \"x\""}`), new(pointBudget))
	if err != nil || env.Status != "error" || env.ErrorType != "bad_data" || env.Error != `parse error at char 3: "x"` {
		t.Errorf("error answer: %+v %v", env, err)
	}
}

// TestScannerStopsAtTheLimits: past query.MaxSeriesPerQuery series, or once a series' points would go past the
// budget, reading stops with errStop and the series held so far.
func TestScannerStopsAtTheLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i := range query.MaxSeriesPerQuery + 5 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"metric":{"i":"` + strconv.Itoa(i) + `"},"values":[[1,"1"],[2,"2"]]}`)
	}
	b.WriteString(`]}}`)
	m, _, truncated, err := scanAnswer([]byte(b.String()), new(pointBudget))
	if !errors.Is(err, errStop) || !truncated || len(m) != query.MaxSeriesPerQuery {
		t.Errorf("series limit: %d series, truncated %v, %v", len(m), truncated, err)
	}
	budget := new(pointBudget)
	budget.used.Store(query.MaxPointsPerQuery - 3)
	m, _, truncated, err = scanAnswer([]byte(b.String()), budget)
	if !errors.Is(err, errStop) || !truncated || len(m) != 1 {
		t.Errorf("points budget: %d series, truncated %v, %v", len(m), truncated, err)
	}
}

// FuzzScanner: any input is read without a panic, and whatever both the scanner and encoding/json (into
// Prometheus's types) read, they read alike.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b\u00e9"},"values":[[1.5,"2"],[2,"NaN"]]}]},"warnings":["w"]}`))
	f.Add([]byte(`{"status":"error","errorType":"x","error":"y"}`))
	f.Add([]byte(`{"data":{"result":[{"metric":{},"values":[],"histograms":[[1,{}]]}],"resultType":"matrix"},"isPartial":true}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, env, truncated, err := scanAnswer(body, new(pointBudget))
		var want modelAnswer
		if foldedKeys(body) {
			return // encoding/json matches "dAtA" to data; Prometheus's API spells its keys one way
		}
		if err != nil || truncated || json.Unmarshal(body, &want) != nil || want.Data.ResultType != "matrix" && want.Data.ResultType != "" {
			return
		}
		if !sameMatrix(got, want.Data.Result) || env.Status != want.Status || env.Error != want.Error || env.IsPartial != want.IsPartial {
			t.Errorf("%q:\nscanned %v %+v\nwant    %v %+v", body, got, env, want.Data.Result, want)
		}
	})
}

// foldedKeys reports whether body spells one of the API's keys in another case, which encoding/json would match.
func foldedKeys(body []byte) bool {
	lower := bytes.ToLower(body)
	for _, k := range []string{"data", "result", "resulttype", "metric", "values", "status", "error", "errortype", "warnings", "infos", "ispartial", "histograms"} {
		exact := 0
		for _, spelled := range []string{k, "resultType", "errorType", "isPartial"} {
			if strings.ToLower(spelled) == k {
				exact += bytes.Count(body, []byte(`"`+spelled+`"`))
			}
		}
		if bytes.Count(lower, []byte(`"`+k+`"`)) != exact {
			return true
		}
	}
	return false
}

func BenchmarkDecodeMatrix(b *testing.B) {
	// 64 series × 721 samples: a 1-hour range at a 5 s step.
	var result []map[string]any
	for i := 0; i < 64; i++ {
		vals := make([][]any, 721)
		for s := range vals {
			vals[s] = []any{1700000000 + 5*s, strconv.FormatFloat(float64(s*i)*1.37, 'g', -1, 64)}
		}
		result = append(result, map[string]any{"metric": map[string]string{"instance": strconv.Itoa(i), "model_name": "m"}, "values": vals})
	}
	data, _ := json.Marshal(map[string]any{"resultType": "matrix", "result": result})
	body, _ := json.Marshal(map[string]any{"status": "success", "data": json.RawMessage(data)})
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, _, _, err := scanAnswerFrom(bufio.NewReader(bytes.NewReader(body)), new(pointBudget)); err != nil { // as stream reads
				b.Fatal(err)
			}
		}
	})
	b.Run("model.Matrix", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var r modelAnswer
			if err := json.Unmarshal(body, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
