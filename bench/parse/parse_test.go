// Package parse compares InferScope's exposition parser with prometheus/common's expfmt and Prometheus's own
// model/textparse on the same ~500 KB vLLM payload. It is a module of its own so that importing Prometheus does not
// move the main module's dependencies (the Grafana SDK needs prometheus/common v0.72.1).
package parse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// payload is an 8-engine vLLM V1 server with every option on: the largest exposition the scraper is sized for.
const payload = "../../testdata/fixtures/synthetic_v1_8engines_full.txt"

func readPayload(tb testing.TB) []byte {
	b, err := os.ReadFile(payload)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// parsers parse the payload as a scraper would and return how many samples they saw.
var parsers = []struct {
	name  string
	parse func([]byte) (int, error)
}{
	{"inferscope", func(b []byte) (int, error) {
		sc, err := exposition.Parse(b, exposition.ParseOptions{Format: exposition.FormatText, NormalizeFloatLabels: true})
		if err != nil {
			return 0, err
		}
		n := 0
		for _, f := range sc.Families {
			n += len(f.Samples)
		}
		return n, nil
	}},
	{"expfmt", func(b []byte) (int, error) {
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
		if err != nil {
			return 0, err
		}
		n := 0
		for _, f := range fams {
			for _, m := range f.Metric {
				switch {
				case m.Histogram != nil:
					n += len(m.Histogram.Bucket) + 2 // buckets (+Inf included in the text), _sum, _count
				case m.Summary != nil:
					n += len(m.Summary.Quantile) + 2
				default:
					n++
				}
			}
		}
		return n, nil
	}},
	{"textparse", func(b []byte) (int, error) {
		p, err := textparse.New(b, "text/plain", labels.NewSymbolTable(), textparse.ParserOptions{})
		if err != nil {
			return 0, err
		}
		n := 0
		var ls labels.Labels
		for {
			e, err := p.Next()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			if e == textparse.EntrySeries {
				p.Series()
				p.Labels(&ls)
				n++
			}
		}
	}},
}

// TestParsersAgree: the three parsers see the same number of samples in the payload, so the benchmark compares
// the same work.
func TestParsersAgree(t *testing.T) {
	b := readPayload(t)
	counts := map[string]int{}
	for _, p := range parsers {
		n, err := p.parse(b)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		counts[p.name] = n
	}
	if counts["inferscope"] == 0 || counts["expfmt"] != counts["inferscope"] || counts["textparse"] != counts["inferscope"] {
		t.Errorf("samples seen: %v", counts)
	}
}

// BenchmarkParsers parses the payload with each parser; the last sub-benchmark reports the others' time over
// InferScope's, measured in the same run.
func BenchmarkParsers(b *testing.B) {
	data := readPayload(b)
	ns := map[string]float64{}
	for _, p := range parsers {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.parse(data); err != nil {
					b.Fatal(err)
				}
			}
			ns[p.name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N) // the last, longest run is kept
		})
	}
	b.Run("ratios", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(ns["expfmt"]/ns["inferscope"], "expfmt/inferscope")
		b.ReportMetric(ns["textparse"]/ns["inferscope"], "textparse/inferscope")
	})
}
