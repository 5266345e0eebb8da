package exposition

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are small valid inputs exercising each feature.
var fuzzSeeds = []string{
	"# HELP foo A \\\"quoted\\\" help\\nline\n# TYPE foo counter\nfoo{a=\"b\\\\c\",d=\"\\\"e\\\"\\n\"} 1.5 1700000000000\n",
	"# TYPE h histogram\nh_bucket{x=\"1\",le=\"0.5\"} 1\nh_bucket{x=\"1\",le=\"+Inf\"} 2\nh_sum{x=\"1\"} 0.7\nh_count{x=\"1\"} 2\n",
	"# TYPE s summary\ns{quantile=\"0.5\"} NaN\ns_sum 1\ns_count 3\n",
	"vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} +Inf\nother -Inf\n",
	"{\"my.metric\",\"label.name\"=\"ü\"} 1\n\"other.metric\"{a=\"b\",} 2\n",
	"# TYPE g gauge\r\ng 1\r\n\r\n",
	"# TYPE c counter\n# UNIT c s\nc_total 1 1.5 # {t=\"x\"} 1 2\nc_created 1\n# EOF\n",
	"# TYPE i info\ni_info{v=\"1\"} 1\n# TYPE st stateset\nst{st=\"a\"} 1\n# EOF",
	"# TYPE h histogram\nh_count 1.5\nh_count 2\nh_sum 1\nh_sum 2\nh_bucket{le=\"1\"} 0.5\nh_bucket{le=\"1\"} -0\n",
	"# TYPE h histogram\nh_bucket{le=\"1\",a=\"x\"} 2.5\nh_count{a=\"x\"} NaN\nh_bucket{a=\"y\",le=\"1e3\"} 1e30\n",
	"# TYPE s summary\ns_count 2.7\ns_count -3\ns_sum -0\ns{quantile=\"1e-3\"} 1\n",
	"# HELP h_bucket via suffix\n# TYPE h gauge_histogram\nh_bucket{le=\"+Inf\"} 1 123\n",
}

// FuzzParse checks that Parse never panics or hangs, that what it accepts is
// well-formed, and that whenever expfmt also accepts a text body both agree
// on every family, type, help text and sample (see canonOurs for the known,
// intentional differences that are normalized away).
func FuzzParse(f *testing.F) {
	for _, data := range fixtures(f) {
		// Whole fixtures are checked by TestDifferentialFixtures; small seeds
		// keep the fuzzer (and its minimizer) fast.
		if len(data) > 4<<10 {
			data = data[:bytes.LastIndexByte(data[:4<<10], '\n')+1]
		}
		f.Add(data)
	}
	for _, tc := range malformedCases {
		f.Add([]byte(tc.in))
	}
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []Format{FormatAuto, FormatText, FormatOpenMetrics} {
			s, err := Parse(data, ParseOptions{Format: format})
			checkResult(t, data, s, err)
		}
		kept, err := Parse(data, ParseOptions{MaxSamples: 3, Keep: func(n string) bool { return len(n)%2 == 0 }})
		checkResult(t, data, kept, err)

		compareWithExpfmt(t, data)
		// Random bytes rarely form an exposition both parsers accept, so the
		// same bytes also drive a generator of nearly valid ones.
		gen := genExposition(data)
		s, err := Parse(gen, ParseOptions{Format: FormatText})
		checkResult(t, gen, s, err)
		compareWithExpfmt(t, gen)
	})
}

func compareWithExpfmt(t *testing.T, data []byte) {
	ours, err := Parse(data, ParseOptions{Format: FormatText})
	if err != nil {
		return
	}
	ref, err := parseExpfmt(data)
	if err != nil || expfmtMisgroups(data, ours) {
		return
	}
	if d := diffCanon(canonExpfmt(ref), canonOurs(ours)); d != "" {
		t.Fatalf("accepted by both parsers but different:\n%s\ninput: %q", d, data)
	}
}

// genExposition builds a text exposition from b, choosing each piece from
// small pools of valid and tricky tokens.
func genExposition(b []byte) []byte {
	next := func(n int) int {
		if len(b) == 0 {
			return 0
		}
		v := int(b[0]) % n
		b = b[1:]
		return v
	}
	pick := func(pool []string) string { return pool[next(len(pool))] }
	names := []string{"a", "b", "h", "s", "vllm:x", "a_bucket", "h_sum", "\"d.o.t\"", "c_total"}
	suffixes := []string{"", "", "_bucket", "_sum", "_count", "_total", "_created"}
	types := []string{"counter", "gauge", "histogram", "summary", "untyped", "Gauge", "gaugehistogram", "info"}
	helps := []string{"plain", "with \\\\ and \\n", "quote \\\"", "trailing  ", ""}
	lnames := []string{"le", "quantile", "x", "y", "\"q.n\""}
	lvalues := []string{"0.5", "+Inf", "1", "1e3", "NaN", "-1", "x", "a\\\\b", "q\\\"", "\\n", "ü", ""}
	values := []string{"1", "0", "-0", "1.5", "NaN", "+Inf", "-Inf", "1e308", "2.5e-3", "18446744073709551616", "-2", ".5", "5.", "0x1p3", "3"}
	stamps := []string{"", "", " 123", " -5", " +7", " 1.5"}
	blanks := []string{" ", " ", "\t", "  "}
	var out bytes.Buffer
	for lines := 0; len(b) > 0 && lines < 64; lines++ {
		switch next(6) {
		case 0:
			out.WriteString("# HELP " + pick(names) + " " + pick(helps) + "\n")
		case 1:
			out.WriteString("# TYPE " + pick(names) + " " + pick(types) + "\n")
		case 2:
			out.WriteString(pick([]string{"\n", "# comment\n", "  \n"}))
		default:
			out.WriteString(pick(names) + pick(suffixes))
			if n := next(4); n > 0 {
				out.WriteByte('{')
				for i := range n {
					if i > 0 {
						out.WriteByte(',')
					}
					out.WriteString(pick(lnames) + "=\"" + pick(lvalues) + "\"")
				}
				out.WriteByte('}')
			}
			out.WriteString(pick(blanks) + pick(values) + pick(stamps) + "\n")
		}
	}
	return out.Bytes()
}

// expfmtMisgroups reports inputs on which expfmt's grouping is known to be
// wrong: a line starting with '{' is handled with the previous line's family
// type, so its histogram or summary labels mix with stale ones.
func expfmtMisgroups(data []byte, s *Scrape) bool {
	complex := false
	for i := range s.Families {
		switch s.Families[i].Type {
		case TypeHistogram, TypeGaugeHistogram, TypeSummary:
			complex = true
		}
	}
	if !complex {
		return false
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if l := bytes.TrimLeft(line, " \t"); len(l) > 0 && l[0] == '{' {
			return true
		}
	}
	return false
}

// checkResult asserts the invariants of a Parse result and exercises the
// helpers on it.
func checkResult(t *testing.T, data []byte, s *Scrape, err error) {
	t.Helper()
	if err != nil {
		var pe *ParseError
		switch {
		case errors.As(err, &pe):
			if pe.Line < 1 || pe.Line > bytes.Count(data, []byte("\n"))+2 {
				t.Fatalf("error line %d out of range: %v", pe.Line, err)
			}
		case errors.Is(err, ErrSampleLimit):
		default:
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
		if s != nil {
			t.Fatal("Scrape returned with error")
		}
		return
	}
	for i := range s.Families {
		f := &s.Families[i]
		if s.Family(f.Name) != f {
			t.Fatalf("Family(%q) lookup broken", f.Name)
		}
		if !utf8.ValidString(f.Name) || f.Name == "" {
			t.Fatalf("bad family name %q", f.Name)
		}
		for _, smp := range f.Samples {
			if s.FamilyOf(smp.Name) != f {
				t.Fatalf("FamilyOf(%q) is not %q", smp.Name, f.Name)
			}
			for _, l := range smp.Labels {
				if !utf8.ValidString(l.Name) || !utf8.ValidString(l.Value) || l.Name == "" {
					t.Fatalf("bad label %q", l)
				}
			}
			k := smp.Key()
			if !strings.HasPrefix(k, smp.Name) {
				t.Fatalf("key %q", k)
			}
			_ = smp.Labels.Hash()
		}
		f.Histograms()
		f.Summaries()
	}
}
