package exposition

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

const fixtureDir = "../../testdata/fixtures/"

func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(fixtureDir + "*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// TestDifferentialFixtures checks every fixture against expfmt: same
// families, types, help texts and samples.
func TestDifferentialFixtures(t *testing.T) {
	for name, data := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			want, err := parseExpfmt(data)
			if err != nil {
				t.Fatalf("expfmt: %v", err)
			}
			got, err := Parse(data, ParseOptions{Format: FormatText})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if d := diffCanon(canonExpfmt(want), canonOurs(got)); d != "" {
				t.Errorf("differs from expfmt:\n%s", d)
			}
			// Auto-detection must pick text for these bodies.
			auto, err := Parse(data, ParseOptions{})
			if err != nil || auto.Format != FormatText || auto.NumSamples() != got.NumSamples() {
				t.Errorf("auto: format %v, %v", auto.Format, err)
			}
		})
	}
}

// TestDifferentialOpenMetrics re-encodes each fixture as OpenMetrics with
// expfmt's encoder, adding _created lines and exemplars, and checks that
// parsing it yields the same series and values as the text fixture.
func TestDifferentialOpenMetrics(t *testing.T) {
	const created = 1.7e9
	for name, data := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			fams, err := parseExpfmt(data)
			if err != nil {
				t.Fatal(err)
			}
			text, err := Parse(data, ParseOptions{Format: FormatText})
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, 0, len(fams))
			for n := range fams {
				names = append(names, n)
			}
			slices.Sort(names)
			var buf bytes.Buffer
			nCreated := 0
			for _, n := range names {
				// Text-format _created gauges would clash with the _created
				// lines OpenMetrics adds to their families; they are replaced
				// by CreatedTimestamp below.
				if strings.HasSuffix(n, "_created") {
					continue
				}
				mf := fams[n]
				for _, m := range mf.Metric {
					ts := timestamppb.New(time.Unix(int64(created), 0))
					ex := &dto.Exemplar{Label: []*dto.LabelPair{{Name: proto.String("trace_id"), Value: proto.String("abc")}}, Value: proto.Float64(0.5), Timestamp: ts}
					switch {
					case m.Counter != nil:
						m.Counter.CreatedTimestamp = ts
						m.Counter.Exemplar = ex
						if strings.HasSuffix(n, "_total") {
							nCreated++
						}
					case m.Histogram != nil:
						m.Histogram.CreatedTimestamp = ts
						for _, b := range m.Histogram.Bucket {
							b.Exemplar = ex
						}
						nCreated++
					case m.Summary != nil:
						m.Summary.CreatedTimestamp = ts
						nCreated++
					}
				}
				if _, err := expfmt.MetricFamilyToOpenMetrics(&buf, mf, expfmt.WithCreatedLines()); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := expfmt.FinalizeOpenMetrics(&buf); err != nil {
				t.Fatal(err)
			}
			om, err := Parse(buf.Bytes(), ParseOptions{})
			if err != nil {
				t.Fatalf("Parse OpenMetrics: %v\n%s", err, buf.String())
			}
			if om.Format != FormatOpenMetrics {
				t.Fatalf("format %v, want openmetrics", om.Format)
			}
			gotCreated := 0
			for fi := range om.Families {
				f := &om.Families[fi]
				for _, s := range f.Samples {
					if strings.HasSuffix(s.Name, "_created") && roleOf(s.Name, f.Name) == roleCreated {
						gotCreated++
						if s.Value != created {
							t.Errorf("%s = %v, want %v", s.Name, s.Value, created)
						}
					}
				}
			}
			if gotCreated != nCreated {
				t.Errorf("%d _created samples in their families, want %d", gotCreated, nCreated)
			}
			want, got := seriesValues(text, "_created"), seriesValues(om, "_created")
			// expfmt's encoder adds the +Inf bucket a histogram lacks.
			got = slices.DeleteFunc(got, func(s string) bool {
				return strings.Contains(s, `"le"="+Inf"`) && !slices.Contains(want, s)
			})
			if d := diffLines(want, got); d != "" {
				t.Errorf("OpenMetrics series differ from text:\n%s", d)
			}
			// Every text series must be found through the OpenMetrics family
			// that holds it, with a matching type.
			for fi := range text.Families {
				tf := &text.Families[fi]
				if strings.HasSuffix(tf.Name, "_created") {
					continue
				}
				for _, s := range tf.Samples {
					of := om.FamilyOf(s.Name)
					if of == nil {
						t.Errorf("FamilyOf(%q) = nil", s.Name)
						continue
					}
					wantType := tf.Type
					if wantType == TypeUntyped || wantType == TypeCounter && !strings.HasSuffix(tf.Name, "_total") {
						wantType = TypeUnknown
					}
					if of.Type != wantType {
						t.Errorf("FamilyOf(%q).Type = %v, want %v", s.Name, of.Type, wantType)
					}
				}
			}
		})
	}
}

// seriesValues lists "key value" for every sample except those whose name
// ends in skipSuffix, sorted, with le/quantile normalized.
func seriesValues(s *Scrape, skipSuffix string) []string {
	var out []string
	for fi := range s.Families {
		for _, smp := range s.Families[fi].Samples {
			if skipSuffix != "" && strings.HasSuffix(smp.Name, skipSuffix) {
				continue
			}
			var ls []Label
			special, sv := "", 0.0
			for _, l := range smp.Labels {
				if l.Name == "le" || l.Name == "quantile" {
					special = l.Name
					sv, _ = parseFloat(l.Value)
					continue
				}
				ls = append(ls, l)
			}
			out = append(out, canonSample(smp.Name, ls, special, sv, smp.Value, nil))
		}
	}
	slices.Sort(out)
	return out
}

func diffLines(want, got []string) string {
	if slices.Equal(want, got) {
		return ""
	}
	var b strings.Builder
	w := map[string]int{}
	for _, s := range want {
		w[s]++
	}
	for _, s := range got {
		w[s]--
	}
	for s, n := range w {
		if n > 0 {
			b.WriteString("missing: " + s + "\n")
		} else if n < 0 {
			b.WriteString("extra:   " + s + "\n")
		}
		if b.Len() > 3000 {
			break
		}
	}
	return b.String()
}

// TestOpenMetricsHandWritten covers what expfmt cannot check: OpenMetrics
// types, UNIT, exemplars, float timestamps and suffix grouping.
func TestOpenMetricsHandWritten(t *testing.T) {
	const in = `# TYPE vllm:prompt_tokens counter
# UNIT vllm:prompt_tokens tokens
# HELP vllm:prompt_tokens Prefill tokens.
vllm:prompt_tokens_total{engine="0"} 42 1700000000.123 # {trace_id="a"} 1 1700000000.1
vllm:prompt_tokens_created{engine="0"} 1.7e9
# TYPE lat histogram
lat_bucket{le="0.5"} 1 # {trace_id="b"} 0.3
lat_bucket{le="+Inf"} 2
lat_count 2
lat_sum 1.25
lat_created 1.7e9
# TYPE q gaugehistogram
q_bucket{le="1"} 3
q_bucket{le="+Inf"} 4
q_gcount 4
q_gsum 7
# TYPE build info
build_info{version="0.9"} 1
# TYPE feat stateset
feat{feat="a"} 1
feat{feat="b"} 0
# TYPE up unknown
up 1
loose 3
# EOF
`
	s, err := Parse([]byte(in), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Format != FormatOpenMetrics {
		t.Fatalf("format %v", s.Format)
	}
	type fam struct {
		name, unit string
		typ        Type
		samples    []string
	}
	want := []fam{
		{"vllm:prompt_tokens", "tokens", TypeCounter, []string{"vllm:prompt_tokens_total", "vllm:prompt_tokens_created"}},
		{"lat", "", TypeHistogram, []string{"lat_bucket", "lat_bucket", "lat_count", "lat_sum", "lat_created"}},
		{"q", "", TypeGaugeHistogram, []string{"q_bucket", "q_bucket", "q_gcount", "q_gsum"}},
		{"build", "", TypeInfo, []string{"build_info"}},
		{"feat", "", TypeStateset, []string{"feat", "feat"}},
		{"up", "", TypeUnknown, []string{"up"}},
		{"loose", "", TypeUnknown, []string{"loose"}},
	}
	if len(s.Families) != len(want) {
		t.Fatalf("%d families, want %d", len(s.Families), len(want))
	}
	for i, w := range want {
		f := s.Families[i]
		var names []string
		for _, smp := range f.Samples {
			names = append(names, smp.Name)
		}
		if f.Name != w.name || f.Unit != w.unit || f.Type != w.typ || !slices.Equal(names, w.samples) {
			t.Errorf("family %d = %q %q %v %q, want %+v", i, f.Name, f.Unit, f.Type, names, w)
		}
	}
	pt := s.Family("vllm:prompt_tokens")
	if pt.Help != "Prefill tokens." {
		t.Errorf("help %q", pt.Help)
	}
	if smp := pt.Samples[0]; smp.Value != 42 || !smp.HasTimestamp || smp.TimestampMs != 1700000000123 {
		t.Errorf("sample %+v", smp)
	}
	hs := s.Family("lat").Histograms()
	if len(hs) != 1 || len(hs[0].Buckets) != 2 || hs[0].Count != 2 || hs[0].Sum != 1.25 || !hs[0].HasCreated || hs[0].Created != 1.7e9 {
		t.Errorf("lat histograms %+v", hs)
	}
	gh := s.Family("q").Histograms()
	if len(gh) != 1 || gh[0].Count != 4 || gh[0].Sum != 7 || !math.IsInf(gh[0].Buckets[1].UpperBound, 1) {
		t.Errorf("q histograms %+v", gh)
	}
	var got []float64
	for smp := range s.Series("vllm:prompt_tokens_total") {
		got = append(got, smp.Value)
	}
	if !slices.Equal(got, []float64{42}) {
		t.Errorf("Series = %v", got)
	}
}
