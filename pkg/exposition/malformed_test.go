package exposition

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type malformedCase struct {
	name   string
	format Format
	in     string
	line   int
	msg    string // substring of the error
}

var malformedCases = []malformedCase{
	{"unterminated label value", FormatText, "foo{a=\"b} 1\n", 1, "unterminated value"},
	{"unterminated label set", FormatText, "foo{a=\"b\"\n", 1, "unterminated label set"},
	{"unquoted label value", FormatText, "foo{a=b} 1\n", 1, "expected '\"'"},
	{"missing equals", FormatText, "foo{a\"b\"} 1\n", 1, "expected '='"},
	{"empty label", FormatText, "foo{,} 1\n", 1, "invalid label name"},
	{"label starts with digit", FormatText, "foo{1a=\"b\"} 1\n", 1, "invalid label name"},
	{"bad escape", FormatText, "foo{a=\"\\q\"} 1\n", 1, "invalid escape"},
	{"trailing backslash", FormatText, "foo{a=\"\\\"} 1\n", 1, "unterminated value"},
	{"duplicate label", FormatText, "foo{a=\"b\",a=\"c\"} 1\n", 1, "duplicate label"},
	{"duplicate label long set", FormatText, "foo{" + manyLabels(40) + ",l7=\"x\"} 1\n", 1, "duplicate label"},
	{"reserved label", FormatText, "foo{__name__=\"x\"} 1\n", 1, "reserved"},
	{"label value not UTF-8", FormatText, "foo{a=\"\xff\"} 1\n", 1, "invalid UTF-8"},
	{"quoted label name not UTF-8", FormatText, "foo{\"\xfe\"=\"x\"} 1\n", 1, "invalid UTF-8"},
	{"missing comma", FormatText, "foo{a=\"b\" b=\"c\"} 1\n", 1, "expected ',' or '}'"},
	{"value not a float", FormatText, "foo abc\n", 1, "invalid value"},
	{"hex float", FormatText, "foo 0x1p3\n", 1, "invalid value"},
	{"digit separator", FormatText, "foo 1_000\n", 1, "invalid value"},
	{"float out of range", FormatText, "foo 1e400\n", 1, "invalid value"},
	{"missing value", FormatText, "foo\n", 1, "missing value"},
	{"missing value after labels", FormatText, "foo{a=\"b\"}\n", 1, "missing value"},
	{"value glued to labels", FormatText, "foo{a=\"b\"}1\n", 1, "blank before value"},
	{"timestamp not an int", FormatText, "foo 1 abc\n", 1, "invalid timestamp"},
	{"float timestamp in text", FormatText, "foo 1 1.5\n", 1, "invalid timestamp"},
	{"timestamp overflow", FormatText, "foo 1 99999999999999999999\n", 1, "invalid timestamp"},
	{"text after timestamp", FormatText, "foo 1 2 3\n", 1, "unexpected text"},
	{"exemplar in text", FormatText, "foo 1 # {a=\"b\"} 1\n", 1, "invalid timestamp"},
	{"no final newline", FormatText, "foo 1\nbar 2", 2, "missing newline"},
	{"cut mid label", FormatText, "foo{a=\"b\"} 1\nbar{a=\"", 2, "unterminated value"},
	{"second TYPE", FormatText, "# TYPE foo gauge\n# TYPE foo counter\n", 2, "second TYPE"},
	{"TYPE after samples", FormatText, "foo 1\n# TYPE foo gauge\n", 2, "TYPE after its samples"},
	{"TYPE via suffix", FormatText, "# TYPE foo histogram\n# TYPE foo_bucket gauge\n", 2, "second TYPE"},
	{"second HELP", FormatText, "# HELP foo a\n# HELP foo b\n", 2, "second HELP"},
	{"unknown type", FormatText, "# TYPE foo bogus\n", 1, "unknown metric type"},
	{"info type in text", FormatText, "# TYPE foo info\n", 1, "unknown metric type"},
	{"bad help escape", FormatText, "# HELP foo bad \\x\n", 1, "invalid escape"},
	{"bad name in TYPE", FormatText, "# TYPE foo{ gauge\n", 1, "invalid metric name in TYPE"},
	{"invalid le", FormatText, "# TYPE foo histogram\nfoo_bucket{le=\"x\"} 1\n", 2, "invalid le"},
	{"bucket without le", FormatText, "# TYPE foo histogram\nfoo_bucket 1\n", 2, "no le label"},
	{"negative bucket", FormatText, "# TYPE foo histogram\nfoo_bucket{le=\"1\"} -1\n", 2, "negative count"},
	{"negative histogram count", FormatText, "# TYPE foo histogram\nfoo_count -1\n", 2, "negative count"},
	{"histogram without suffix", FormatText, "# TYPE foo histogram\nfoo 1\n", 2, "needs a _bucket"},
	{"le on sum", FormatText, "# TYPE foo histogram\nfoo_sum{le=\"1\"} 1\n", 2, "unexpected le"},
	{"summary without quantile", FormatText, "# TYPE foo summary\nfoo 1\n", 2, "no quantile"},
	{"invalid quantile", FormatText, "# TYPE foo summary\nfoo{quantile=\"x\"} 1\n", 2, "invalid quantile"},
	{"quantile on count", FormatText, "# TYPE foo summary\nfoo_count{quantile=\"0.5\"} 1\n", 2, "unexpected quantile"},
	{"labels without name", FormatText, "{a=\"b\"} 1\n", 1, "metric name first"},
	{"empty braces", FormatText, "{} 1\n", 1, "metric name first"},
	{"unterminated quoted name", FormatText, "\"foo 1\n", 1, "unterminated quoted name"},
	{"quoted name not UTF-8", FormatText, "\"\xff\" 1\n", 1, "invalid metric name"},
	{"empty quoted name", FormatText, "\"\" 1\n", 1, "invalid metric name"},
	{"name starts with digit", FormatText, "1foo 1\n", 1, "invalid metric name"},
	{"line counting with CRLF", FormatText, "a 1\r\nb 2\r\nc x\r\n", 3, "invalid value"},
	{"line counting with blank lines", FormatText, "\n\n  foo x\n", 3, "invalid value"},
	{"OM missing EOF", FormatOpenMetrics, "foo 1\n", 1, "missing # EOF"},
	{"OM content after EOF", FormatOpenMetrics, "# EOF\nfoo 1\n", 2, "after # EOF"},
	{"OM text after EOF keyword", FormatOpenMetrics, "# EOF now\n", 1, "after # EOF"},
	{"OM plain comment", FormatOpenMetrics, "# just a comment\n# EOF\n", 1, "invalid OpenMetrics comment"},
	{"OM exemplar without value", FormatOpenMetrics, "foo_total 1 # {a=\"b\"}\n# EOF\n", 1, "exemplar without value"},
	{"OM exemplar without labels", FormatOpenMetrics, "foo_total 1 # bad\n# EOF\n", 1, "invalid exemplar"},
	{"OM bad exemplar timestamp", FormatOpenMetrics, "foo_total 1 # {a=\"b\"} 1 x\n# EOF\n", 1, "invalid exemplar timestamp"},
	{"OM second UNIT", FormatOpenMetrics, "# UNIT foo s\n# UNIT foo s\n# EOF\n", 2, "second UNIT"},
	{"OM untyped keyword", FormatOpenMetrics, "# TYPE foo untyped\n# EOF\n", 1, "unknown metric type"},
	{"OM NaN timestamp", FormatOpenMetrics, "foo 1 NaN\n# EOF\n", 1, "invalid timestamp"},
	{"OM gauge histogram gcount negative", FormatOpenMetrics, "# TYPE q gaugehistogram\nq_gcount -2\n# EOF\n", 2, "negative count"},
}

func manyLabels(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "l%d=\"v\"", i)
	}
	return b.String()
}

func TestMalformed(t *testing.T) {
	for _, tc := range malformedCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.in), ParseOptions{Format: tc.format})
			if err == nil {
				t.Fatalf("no error, got %d families", len(s.Families))
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v, want *ParseError", err, err)
			}
			if pe.Line != tc.line || !strings.Contains(err.Error(), fmt.Sprintf("line %d:", tc.line)) {
				t.Errorf("line %d in %q, want %d", pe.Line, err, tc.line)
			}
			if !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
		})
	}
}

// TestMalformedLongLineExcerpt keeps error messages short whatever the line.
func TestMalformedLongLineExcerpt(t *testing.T) {
	in := "foo{a=\"" + strings.Repeat("x", 1<<20) + "\n"
	_, err := Parse([]byte(in), ParseOptions{})
	if err == nil {
		t.Fatal("no error")
	}
	if len(err.Error()) > 200 {
		t.Errorf("error is %d bytes long", len(err.Error()))
	}
	in = "foo{a=\"" + strings.Repeat("x", 500) + "\"} bad\n"
	_, err = Parse([]byte(in), ParseOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Near, "...") || !strings.Contains(pe.Near, "} bad") || len(pe.Near) > excerptLen+6 {
		t.Errorf("excerpt %q", pe.Near)
	}
}
