package exposition

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const benchFixture = fixtureDir + "synthetic_v1_8engines_full.txt"

func benchData(b *testing.B) []byte {
	data, err := os.ReadFile(benchFixture)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkParse(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, ParseOptions{Format: FormatText}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseKeepVLLM keeps only vllm:* families, as the query types do.
func BenchmarkParseKeepVLLM(b *testing.B) {
	data := benchData(b)
	keep := func(name string) bool { return strings.HasPrefix(name, "vllm:") }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, ParseOptions{Format: FormatText, Keep: keep}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseScraper parses as the direct-mode scraper does: vllm:* families kept, le and quantile normalised
// as Prometheus 3 stores them.
func BenchmarkParseScraper(b *testing.B) {
	data := benchData(b)
	keep := func(name string) bool { return strings.HasPrefix(name, "vllm:") }
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, ParseOptions{Format: FormatText, Keep: keep, NormalizeFloatLabels: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExpfmtTextParser(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHistograms(b *testing.B) {
	s, err := Parse(benchData(b), ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	f := s.Family("vllm:time_to_first_token_seconds")
	b.ReportAllocs()
	for b.Loop() {
		f.Histograms()
	}
}
