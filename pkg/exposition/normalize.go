package exposition

import (
	"math"
	"strconv"
	"strings"
)

// NormalizeFloatLabel returns the text Prometheus 3 stores for an le or quantile label value: strconv.ParseFloat's
// reading of v written as an OpenMetrics float ("1" → "1.0", "0.50" → "0.5", "Inf" → "+Inf", "0.00001" →
// "1e-05"), or v unchanged when strconv does not read it. It is model/textparse's normalizeFloatsInLabelValues with
// model/labels.FormatOpenMetricsFloat (Prometheus v3.16, module v0.316.0).
func NormalizeFloatLabel(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	switch {
	case f == 1:
		return "1.0"
	case f == 0:
		return "0.0"
	case f == -1:
		return "-1.0"
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, +1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, "e.") {
		s += ".0"
	}
	return s
}

// normalizeLabels rewrites the le (after a histogram TYPE line) or quantile (after a summary TYPE line) values of
// ls in place, reusing earlier results so a scrape's thousands of buckets cost a map lookup each.
func (p *parser) normalizeLabels(ls Labels) {
	for i := range ls {
		if ls[i].Name != p.floatLabel {
			continue
		}
		v := ls[i].Value
		n, ok := p.normalized[v]
		if !ok {
			n = NormalizeFloatLabel(v)
			if n != v {
				// Interned like every other string of the scrape (n is valid UTF-8: strconv output).
				if s, found := p.strs[n]; found {
					n = s
				} else {
					p.strs[n] = n
				}
			}
			if p.normalized == nil {
				p.normalized = make(map[string]string, 32)
			}
			p.normalized[v] = n
		}
		ls[i].Value = n
	}
}
