package exposition

import (
	"strings"
	"testing"
)

// TestNormalizeFloatLabel is Prometheus 3's labels.FormatOpenMetricsFloat applied to strconv.ParseFloat's reading of
// the value, as model/textparse's normalizeFloatsInLabelValues does. The expectations were printed by that code
// (github.com/prometheus/prometheus v0.316.0, model/labels.FormatOpenMetricsFloat over strconv.ParseFloat).
func TestNormalizeFloatLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1", "1.0"}, {"1.0", "1.0"}, {"1.00", "1.0"}, {"0", "0.0"}, {"-0", "0.0"}, {"-1", "-1.0"}, {"+1", "1.0"},
		{"10", "10.0"}, {"2560", "2560.0"}, {"0.5", "0.5"}, {".5", "0.5"}, {"0.50", "0.5"}, {"0.005", "0.005"},
		{"0.1", "0.1"}, {"0.30000000000000004", "0.30000000000000004"}, {"0.99", "0.99"},
		{"1e-05", "1e-05"}, {"1E-5", "1e-05"}, {"0.00001", "1e-05"}, {"0.0001", "0.0001"},
		{"100000000000000000000", "1e+20"}, {"1e21", "1e+21"}, {"123456789", "1.23456789e+08"}, {"100000", "100000.0"},
		{"+Inf", "+Inf"}, {"Inf", "+Inf"}, {"inf", "+Inf"}, {"+inf", "+Inf"}, {"Infinity", "+Inf"}, {"-Inf", "-Inf"},
		{"NaN", "NaN"}, {"nan", "NaN"},
		// strconv.ParseFloat reads Go float literals, hex floats and digit separators included.
		{"0x1p-2", "0.25"}, {"1_000", "1000.0"},
		// What strconv refuses (or reads only as out of range) is kept as written.
		{"0x10", "0x10"}, {"", ""}, {"abc", "abc"}, {" 1", " 1"}, {"1e400", "1e400"},
	} {
		if got := NormalizeFloatLabel(tc.in); got != tc.want {
			t.Errorf("NormalizeFloatLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestParseNormalizeFloatLabels: with NormalizeFloatLabels, Parse stores what Prometheus 3's text and OpenMetrics
// parsers hand to the TSDB. The rule follows the last TYPE line read, as textparse's parsers do (their metric type is
// only set by TYPE lines): le after "histogram", quantile after "summary", nothing after any other type.
func TestParseNormalizeFloatLabels(t *testing.T) {
	const text = `# TYPE h histogram
h_bucket{le="1",x="1"} 1
h_bucket{le="2.50"} 1
h_bucket{le="+Inf"} 1
h_sum 1
h_count 1
u{le="1",quantile="1"} 1
# TYPE s summary
s{quantile="0.50"} 1
s{quantile="1",le="1"} 1
s_sum 1
s_count 1
# TYPE g gauge
g{le="1",quantile="1"} 1
# TYPE gh gauge_histogram
gh_bucket{le="1"} 1
gh_gcount 1
gh_gsum 1
`
	om := strings.ReplaceAll(strings.ReplaceAll(text, "gauge_histogram", "gaugehistogram"), "u{", "u_total{") + "# EOF\n"
	want := []string{
		`h_bucket{le="1.0",x="1"}`, `h_bucket{le="2.5"}`, `h_bucket{le="+Inf"}`, `h_sum{}`, `h_count{}`,
		`u{le="1.0",quantile="1"}`, // untyped, but read after TYPE h histogram
		`s{quantile="0.5"}`, `s{quantile="1.0",le="1"}`, `s_sum{}`, `s_count{}`,
		`g{le="1",quantile="1"}`,
		`gh_bucket{le="1"}`, `gh_gcount{}`, `gh_gsum{}`,
	}
	for _, tc := range []struct {
		name string
		body string
	}{{"text", text}, {"openmetrics", om}} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse([]byte(tc.body), ParseOptions{NormalizeFloatLabels: true})
			if err != nil {
				t.Fatal(err)
			}
			w := want
			if tc.name == "openmetrics" {
				w = append([]string(nil), want...)
				w[5] = `u_total{le="1.0",quantile="1"}`
			}
			if got := flatLabels(sc); strings.Join(got, "\n") != strings.Join(w, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
			}
			// Without the option the text is kept as written.
			sc, err = Parse([]byte(tc.body), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := flatLabels(sc); got[0] != `h_bucket{le="1",x="1"}` || got[6] != `s{quantile="0.50"}` {
				t.Errorf("without NormalizeFloatLabels: %v", got)
			}
		})
	}
	// A TYPE line of a family Keep drops still sets the type that later lines are read under.
	sc, err := Parse([]byte("# TYPE dropped histogram\nkept{le=\"1\"} 1\n"), ParseOptions{NormalizeFloatLabels: true, Keep: func(f string) bool { return f == "kept" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := flatLabels(sc); len(got) != 1 || got[0] != `kept{le="1.0"}` {
		t.Errorf("after a dropped histogram's TYPE line: %v", got)
	}
}

func flatLabels(sc *Scrape) []string {
	var out []string
	for _, f := range sc.Families {
		for _, s := range f.Samples {
			var b strings.Builder
			b.WriteString(s.Name + "{")
			for i, l := range s.Labels {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(l.Name + `="` + l.Value + `"`)
			}
			b.WriteString("}")
			out = append(out, b.String())
		}
	}
	return out
}
