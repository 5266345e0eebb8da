package exposition

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func mustParse(t *testing.T, in string, opts ParseOptions) *Scrape {
	t.Helper()
	s, err := Parse([]byte(in), opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func TestParseSyntax(t *testing.T) {
	type want struct {
		name   string
		labels Labels
		value  float64
		ts     int64
		hasTs  bool
	}
	tests := []struct {
		name string
		in   string
		want []want
	}{
		{"escapes", `foo{a="back\\slash",b="q\"uote",c="new\nline"} 1` + "\n",
			[]want{{"foo", Labels{{"a", `back\slash`}, {"b", `q"uote`}, {"c", "new\nline"}}, 1, 0, false}}},
		{"utf-8 values", `foo{model="Qwen/Qwen3-0.6B",emoji="🚀 ü"} 2` + "\n",
			[]want{{"foo", Labels{{"model", "Qwen/Qwen3-0.6B"}, {"emoji", "🚀 ü"}}, 2, 0, false}}},
		{"colons in names", "vllm:kv_cache_usage_perc{engine=\"0\"} 0.25\nvllm_profiling_server:create_chat_completion:duration_count 3\n",
			[]want{{"vllm:kv_cache_usage_perc", Labels{{"engine", "0"}}, 0.25, 0, false}, {"vllm_profiling_server:create_chat_completion:duration_count", nil, 3, 0, false}}},
		{"quoted names", "{\"my.metric\", \"label.name\"=\"x\"} 1\n\"other.metric\"{a=\"b\"} 2\n{\"solo.metric\"} 3\n\"esc\\\"aped\" 4\n",
			[]want{{"my.metric", Labels{{"label.name", "x"}}, 1, 0, false}, {"other.metric", Labels{{"a", "b"}}, 2, 0, false}, {"solo.metric", nil, 3, 0, false}, {`esc"aped`, nil, 4, 0, false}}},
		{"special floats", "a NaN\nb +Inf\nc -Inf\nd -0.5e-3\ne 1.7682643398898673e+09\nf .5\ng 12286.0\n",
			[]want{{"a", nil, math.NaN(), 0, false}, {"b", nil, math.Inf(1), 0, false}, {"c", nil, math.Inf(-1), 0, false}, {"d", nil, -0.0005, 0, false}, {"e", nil, 1.7682643398898673e+09, 0, false}, {"f", nil, 0.5, 0, false}, {"g", nil, 12286, 0, false}}},
		{"timestamps", "a 1 1700000000000\nb 2 -5\nc 3 +7\n",
			[]want{{"a", nil, 1, 1700000000000, true}, {"b", nil, 2, -5, true}, {"c", nil, 3, 7, true}}},
		{"whitespace", "  a\t{ x = \"1\" , y=\"2\", }\t 5 \t\n\n\t\n  # comment\n#\nb 6  \n",
			[]want{{"a", Labels{{"x", "1"}, {"y", "2"}}, 5, 0, false}, {"b", nil, 6, 0, false}}},
		{"crlf", "# HELP a x\r\n# TYPE a gauge\r\na{l=\"v\"} 1\r\n\r\nb 2 3\r\n",
			[]want{{"a", Labels{{"l", "v"}}, 1, 0, false}, {"b", nil, 2, 3, true}}},
		{"empty braces", "a{} 1\n", []want{{"a", nil, 1, 0, false}}},
		{"trailing blanks at end without newline", "a 1\n  ", []want{{"a", nil, 1, 0, false}}},
		{"empty input", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.in, ParseOptions{})
			var got []want
			for _, f := range s.Families {
				for _, smp := range f.Samples {
					got = append(got, want{smp.Name, smp.Labels, smp.Value, smp.TimestampMs, smp.HasTimestamp})
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d samples %+v, want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				sameValue := g.value == w.value || math.IsNaN(g.value) && math.IsNaN(w.value)
				if g.name != w.name || !slices.Equal(g.labels, w.labels) || !sameValue || g.ts != w.ts || g.hasTs != w.hasTs {
					t.Errorf("sample %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestParseMetadata(t *testing.T) {
	in := `# HELP a First line\nsecond \\ back \"q\"
# TYPE a COUNTER
a 1
#HELP b tolerated without space
# TYPE b Gauge_Histogram
b_bucket{le="1"} 1
# HELP only_meta has no samples
# TYPE only_meta gauge
# HELP a_trailing_space keeps it  
# TYPE
# HELP
# HELP c
c 1
# some other comment
`
	s := mustParse(t, in, ParseOptions{})
	if s.Format != FormatText {
		t.Fatalf("format %v", s.Format)
	}
	checks := []struct {
		name, help string
		typ        Type
		n          int
	}{
		{"a", "First line\nsecond \\ back \"q\"", TypeCounter, 1},
		{"b", "tolerated without space", TypeGaugeHistogram, 1},
		{"only_meta", "has no samples", TypeGauge, 0},
		{"a_trailing_space", "keeps it  ", TypeUntyped, 0},
		{"c", "", TypeUntyped, 1},
	}
	if len(s.Families) != len(checks) {
		t.Fatalf("%d families, want %d", len(s.Families), len(checks))
	}
	for i, c := range checks {
		f := s.Families[i]
		if f.Name != c.name || f.Help != c.help || f.Type != c.typ || len(f.Samples) != c.n {
			t.Errorf("family %d = %q %q %v %d, want %+v", i, f.Name, f.Help, f.Type, len(f.Samples), c)
		}
	}
}

// TestParseGrouping checks expfmt's family assignment: suffixes join
// histograms and summaries only, exact names win, _created is separate in
// text, and a family split into several blocks is regrouped.
func TestParseGrouping(t *testing.T) {
	in := `# TYPE h histogram
h_bucket{le="1"} 1
h_sum 2
h_count 1
h_created 5
# TYPE s summary
s{quantile="0.5"} 1
s_sum 1
s_count 1
# TYPE g gauge
g_sum 1
g 1
other 1
h_bucket{le="+Inf"} 2
g 2
`
	s := mustParse(t, in, ParseOptions{})
	want := map[string][]string{
		"h":         {"h_bucket", "h_sum", "h_count", "h_bucket"},
		"h_created": {"h_created"},
		"s":         {"s", "s_sum", "s_count"},
		"g":         {"g", "g"},
		"g_sum":     {"g_sum"},
		"other":     {"other"},
	}
	order := []string{"h", "h_created", "s", "g", "g_sum", "other"}
	if len(s.Families) != len(order) {
		t.Fatalf("%d families", len(s.Families))
	}
	for i, f := range s.Families {
		var names []string
		for _, smp := range f.Samples {
			names = append(names, smp.Name)
		}
		if f.Name != order[i] || !slices.Equal(names, want[f.Name]) {
			t.Errorf("family %d %q has %q", i, f.Name, names)
		}
	}
	if got := s.Family("g").Samples[1].Value; got != 2 {
		t.Errorf("regrouped g = %v", got)
	}
	if s.FamilyOf("h_bucket").Name != "h" || s.FamilyOf("g_sum").Name != "g_sum" || s.FamilyOf("nope") != nil {
		t.Error("FamilyOf")
	}
}

func TestParseKeepAndLimit(t *testing.T) {
	data := fixtures(t)["synthetic_v1_8engines_full.txt"]
	all, err := Parse(data, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	vllm, err := Parse(data, ParseOptions{Keep: func(n string) bool {
		calls = append(calls, n)
		return strings.HasPrefix(n, "vllm:")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != len(all.Families) {
		t.Errorf("Keep called %d times for %d families", len(calls), len(all.Families))
	}
	want := 0
	for _, f := range all.Families {
		if strings.HasPrefix(f.Name, "vllm:") {
			want += len(f.Samples)
			if kf := vllm.Family(f.Name); kf == nil || len(kf.Samples) != len(f.Samples) {
				t.Errorf("family %q lost samples", f.Name)
			}
		}
	}
	for _, f := range vllm.Families {
		if !strings.HasPrefix(f.Name, "vllm:") {
			t.Errorf("family %q kept", f.Name)
		}
	}
	if vllm.NumSamples() != want || want == 0 {
		t.Errorf("%d samples kept, want %d", vllm.NumSamples(), want)
	}
	if vllm.Family("python_info") != nil {
		t.Error("dropped family still indexed")
	}

	n := all.NumSamples()
	if _, err := Parse(data, ParseOptions{MaxSamples: n}); err != nil {
		t.Errorf("limit == samples: %v", err)
	}
	_, err = Parse(data, ParseOptions{MaxSamples: n - 1})
	if !errors.Is(err, ErrSampleLimit) || !strings.Contains(err.Error(), "4279") {
		t.Errorf("limit error = %v", err)
	}
	// The limit counts kept samples only.
	if _, err := Parse(data, ParseOptions{MaxSamples: want, Keep: func(n string) bool { return strings.HasPrefix(n, "vllm:") }}); err != nil {
		t.Errorf("limit with Keep: %v", err)
	}
}

func TestParseDoesNotRetainInput(t *testing.T) {
	in := []byte("# HELP foo help\n# TYPE foo gauge\nfoo{a=\"b\"} 1\n")
	s := mustParse(t, string(in), ParseOptions{})
	buf := []byte(string(in))
	s2, err := Parse(buf, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		buf[i] = 'x'
	}
	if s2.Families[0].Name != "foo" || s2.Families[0].Help != "help" || s2.Families[0].Samples[0].Labels.Get("a") != "b" {
		t.Errorf("Scrape changed with its input: %+v", s2.Families[0])
	}
	_ = s
}

func TestDetectFormat(t *testing.T) {
	for in, want := range map[string]Format{
		"# EOF":                 FormatOpenMetrics,
		"a 1\n# EOF\n":          FormatOpenMetrics,
		"a 1\r\n# EOF\r\n":      FormatOpenMetrics,
		"a 1\n":                 FormatText,
		"a 1\n## EOF\n":         FormatText,
		"":                      FormatText,
		"a 1\n# EOF\nb 2\n":     FormatText,
		"# HELP a x\n# EOF\n\n": FormatText,
	} {
		if got := DetectFormat([]byte(in)); got != want {
			t.Errorf("DetectFormat(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestParseSharedBacking checks that all labels of a Scrape live in one
// array in sample order, also when the initial size estimates are exceeded.
func TestParseSharedBacking(t *testing.T) {
	dense := strings.Repeat("a{b=\"1\",c=\"2\",d=\"3\"} 1\nz 2\n", 1000) // more labels than the byte-based estimate
	for name, in := range map[string]string{
		"fixture": string(fixtures(t)["synthetic_v1_8engines_full.txt"]),
		"dense":   dense,
		"split":   "# TYPE a gauge\na{x=\"1\"} 1\nb{y=\"1\"} 2\na{x=\"2\"} 3\n",
	} {
		t.Run(name, func(t *testing.T) {
			s := mustParse(t, in, ParseOptions{})
			var prevEnd uintptr
			n := 0
			for _, f := range s.Families {
				for _, smp := range f.Samples {
					if len(smp.Labels) == 0 {
						continue
					}
					start := uintptr(unsafe.Pointer(unsafe.SliceData(smp.Labels)))
					if prevEnd != 0 && start != prevEnd {
						t.Fatalf("labels of %s not adjacent to the previous sample's", smp.Key())
					}
					prevEnd = start + uintptr(len(smp.Labels))*unsafe.Sizeof(Label{})
					n++
				}
			}
			if n == 0 {
				t.Fatal("no labels")
			}
			if name == "dense" {
				a := s.Family("a")
				if len(a.Samples) != 1000 || a.Samples[999].Labels.Key() != `{b="1",c="2",d="3"}` || s.Family("z").Samples[999].Value != 2 {
					t.Errorf("dense parse wrong")
				}
			}
		})
	}
}
