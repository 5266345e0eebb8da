package exposition

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestLabelsHelpers(t *testing.T) {
	a := Labels{{"model_name", "m"}, {"engine", "0"}, {"le", "0.5"}}
	b := Labels{{"engine", "0"}, {"le", "+Inf"}, {"model_name", "m"}}
	if a.Get("engine") != "0" || a.Get("missing") != "" {
		t.Error("Get")
	}
	if v, ok := a.Lookup("le"); !ok || v != "0.5" {
		t.Error("Lookup")
	}
	if _, ok := a.Lookup("x"); ok {
		t.Error("Lookup of missing label")
	}
	if got := a.Key(); got != `{engine="0",le="0.5",model_name="m"}` {
		t.Errorf("Key = %s", got)
	}
	if a.KeyWithout("le") != b.KeyWithout("le") || a.Key() == b.Key() {
		t.Error("KeyWithout")
	}
	if a.HashWithout("le") != b.HashWithout("le") || a.Hash() == b.Hash() {
		t.Error("HashWithout")
	}
	if !equalWithout(a, b, "le") || equalWithout(a, b, "") {
		t.Error("equalWithout")
	}
	if !equalWithout(Labels{{"x", "1"}}, Labels{{"le", "1"}, {"x", "1"}}, "le") {
		t.Error("equalWithout with le in one set only")
	}
	if equalWithout(Labels{{"x", "1"}}, Labels{{"x", "1"}, {"y", "1"}}, "le") {
		t.Error("equalWithout with extra label")
	}
	// Hash must not depend on where one string ends and the next starts.
	if (Labels{{"ab", "c"}}).Hash() == (Labels{{"a", "bc"}}).Hash() {
		t.Error("Hash ambiguity")
	}
	odd := Labels{{"a.b", "x\"y\\z\nw"}}
	if got := odd.Key(); got != `{"a.b"="x\"y\\z\nw"}` {
		t.Errorf("Key = %s", got)
	}
	if (Labels{}).String() != "{}" || (Labels{}).Key() != "" {
		t.Error("empty")
	}
	// Stable across processes: a fixed, seedless value.
	if h := (Labels{{"a", "b"}}).Hash(); h != (Labels{{"a", "b"}}).Hash() || h == 0 {
		t.Error("Hash")
	}
	s := Sample{Name: "foo_bucket", Labels: a}
	if s.Key() != `foo_bucket{engine="0",le="0.5",model_name="m"}` {
		t.Errorf("Sample.Key = %s", s.Key())
	}
}

func TestHistograms(t *testing.T) {
	// Series interleaved, buckets unsorted and labels in varying order.
	in := `# TYPE lat histogram
lat_sum{engine="0"} 3.5
lat_bucket{engine="0",le="1"} 2
lat_bucket{le="0.1",engine="1"} 0
lat_bucket{engine="0",le="+Inf"} 3
lat_bucket{engine="0",le="0.1"} 1
lat_count{engine="0"} 3
lat_bucket{engine="1",le="+Inf"} 1
lat_sum{engine="1"} 7
lat_count{engine="1"} 1
`
	s := mustParse(t, in, ParseOptions{})
	hs := s.Family("lat").Histograms()
	if len(hs) != 2 {
		t.Fatalf("%d series", len(hs))
	}
	h0, h1 := hs[0], hs[1]
	if h0.Labels.Key() != `{engine="0"}` || h1.Labels.Key() != `{engine="1"}` {
		t.Errorf("labels %v %v", h0.Labels, h1.Labels)
	}
	wantB0 := []Bucket{{0.1, 1}, {1, 2}, {math.Inf(1), 3}}
	if !slices.Equal(h0.Buckets, wantB0) || h0.Sum != 3.5 || h0.Count != 3 || !h0.HasSum || !h0.HasCount {
		t.Errorf("series 0 = %+v", h0)
	}
	wantB1 := []Bucket{{0.1, 0}, {math.Inf(1), 1}}
	if !slices.Equal(h1.Buckets, wantB1) || h1.Sum != 7 || h1.Count != 1 {
		t.Errorf("series 1 = %+v", h1)
	}
	if h1.Labels.Get("le") != "" {
		t.Error("le kept in series labels")
	}
	if s.Family("lat").Summaries() != nil {
		t.Error("Summaries of a histogram")
	}
}

func TestHistogramsFixture(t *testing.T) {
	data := fixtures(t)["synthetic_v1_8engines_full.txt"]
	s, err := Parse(data, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := s.Family("vllm:time_to_first_token_seconds")
	if f == nil {
		t.Fatal("no TTFT family")
	}
	hs := f.Histograms()
	if len(hs) != 8 {
		t.Fatalf("%d TTFT series, want one per engine", len(hs))
	}
	for _, h := range hs {
		n := len(h.Buckets)
		if n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) || h.Buckets[n-1].Count != h.Count || !h.HasSum {
			t.Errorf("series %v: %d buckets, last %+v, count %v", h.Labels, n, h.Buckets[n-1], h.Count)
		}
		for i := 1; i < n; i++ {
			if h.Buckets[i].Count < h.Buckets[i-1].Count {
				t.Errorf("series %v: buckets not cumulative", h.Labels)
			}
		}
		if h.Labels.Get("engine") == "" || strings.Contains(h.Labels.Key(), "le=") {
			t.Errorf("series labels %v", h.Labels)
		}
	}
}

func TestSummaries(t *testing.T) {
	in := `# TYPE rpc summary
rpc{svc="a",quantile="0.5"} 1
rpc{svc="a",quantile="0.9"} 2
rpc_sum{svc="a"} 10
rpc_count{svc="a"} 4
rpc{svc="b",quantile="0.5"} NaN
`
	s := mustParse(t, in, ParseOptions{})
	ss := s.Family("rpc").Summaries()
	if len(ss) != 2 {
		t.Fatalf("%d series", len(ss))
	}
	if !slices.Equal(ss[0].Quantiles, []Quantile{{0.5, 1}, {0.9, 2}}) || ss[0].Sum != 10 || ss[0].Count != 4 {
		t.Errorf("series a = %+v", ss[0])
	}
	if len(ss[1].Quantiles) != 1 || !math.IsNaN(ss[1].Quantiles[0].Value) || ss[1].HasCount {
		t.Errorf("series b = %+v", ss[1])
	}
	if s.Family("rpc").Histograms() != nil {
		t.Error("Histograms of a summary")
	}
}
