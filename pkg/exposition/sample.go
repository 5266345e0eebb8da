package exposition

import (
	"fmt"
	"slices"
)

// parseSample parses a sample line starting at line[i]:
// name [{labels}] value [timestamp] [# exemplar], or {"name", labels} value ...
func (p *parser) parseSample(i int) error {
	name, next, braces, err := p.sampleName(i)
	if err != nil {
		return err
	}
	ri, err := p.resolve(name, i)
	if err != nil {
		return err
	}
	r := &p.res[ri]
	fam, m := &p.fams[r.fam], &p.meta[r.fam]
	if !m.hasType {
		fam.Type, m.hasType = TypeUntyped, true
		if p.format == FormatOpenMetrics {
			fam.Type = TypeUnknown
		}
	}
	if m.drop {
		return nil
	}

	// The labels, checked against the family (histogram le, summary quantile, duplicates).
	line := p.line
	lo := len(p.labels)
	if !braces {
		if j := skipBlank(line, next); j < len(line) && line[j] == '{' {
			next = j + 1
			braces = true
		}
	}
	if braces {
		if next, err = p.parseLabels(next); err != nil {
			return err
		}
	}
	hi := len(p.labels)
	var labels Labels
	if hi > lo {
		labels = p.labels[lo:hi:hi]
		if p.normalize && p.floatLabel != "" {
			p.normalizeLabels(labels)
		}
		if err := p.checkLabels(labels, fam, r, i); err != nil {
			return err
		}
		p.prev = labels
	} else if err := p.checkLabels(nil, fam, r, i); err != nil {
		return err
	}

	v, vEnd, err := p.sampleValue(next, r, fam)
	if err != nil {
		return err
	}
	ts, hasTs, err := p.sampleTail(vEnd)
	if err != nil {
		return err
	}
	return p.appendSample(Sample{Name: r.name, Labels: labels, Value: v, TimestampMs: ts, HasTimestamp: hasTs}, r.fam, m)
}

// sampleName reads the metric name at line[i], bare or as the first item of a label set ({"name", ...}); next is
// where the labels (or the value) start and braces whether a label set is open.
func (p *parser) sampleName(i int) (name []byte, next int, braces bool, err error) {
	line := p.line
	if line[i] != '{' {
		if name, next, err = p.lexName(i, true); err != nil {
			return nil, 0, false, err
		}
		if len(name) == 0 {
			return nil, 0, false, p.errorf(i, "invalid metric name")
		}
		return name, next, false, nil
	}
	j := skipBlank(line, i+1)
	if name, next, err = p.lexName(j, true); err != nil {
		return nil, 0, false, err
	}
	k := skipBlank(line, next)
	if len(name) == 0 || k == len(line) || line[k] != ',' && line[k] != '}' {
		return nil, 0, false, p.errorf(j, "expected the metric name first in a label set")
	}
	next = k
	if line[k] == ',' {
		next++
	}
	return name, next, true, nil
}

// sampleValue reads the value after the labels (or name), refusing negative histogram counts.
func (p *parser) sampleValue(next int, r *resolved, fam *Family) (v float64, end int, err error) {
	line := p.line
	j := skipBlank(line, next)
	if j == len(line) {
		return 0, 0, p.errorf(j, "missing value")
	}
	if j == next {
		return 0, 0, p.errorf(j, "expected blank before value")
	}
	end = tokenEnd(line, j)
	v, ok := parseFloat(line[j:end])
	if !ok {
		return 0, 0, p.errorf(j, "invalid value %q", line[j:end])
	}
	if v < 0 && (r.role == roleBucket || r.role == roleCount && fam.Type != TypeSummary || r.role == roleGCount) {
		return 0, 0, p.errorf(j, "negative count %v in histogram %q", v, fam.Name)
	}
	return v, end, nil
}

// sampleTail reads what may follow the value: a timestamp (ms in the text format, seconds in OpenMetrics) and,
// in OpenMetrics, an exemplar, which is checked and skipped.
func (p *parser) sampleTail(vEnd int) (ts int64, hasTs bool, err error) {
	line := p.line
	om := p.format == FormatOpenMetrics
	k := skipBlank(line, vEnd)
	if k < len(line) && !(om && line[k] == '#') {
		tEnd := tokenEnd(line, k)
		var ok bool
		if om {
			ts, ok = parseSecondsMs(line[k:tEnd])
		} else {
			ts, ok = parseInt(line[k:tEnd])
		}
		if !ok {
			return 0, false, p.errorf(k, "invalid timestamp %q", line[k:tEnd])
		}
		hasTs = true
		k = skipBlank(line, tEnd)
	}
	if k < len(line) {
		if !om || line[k] != '#' {
			return 0, false, p.errorf(k, "unexpected text after sample")
		}
		if err := p.skipExemplar(k + 1); err != nil {
			return 0, false, err
		}
	}
	return ts, hasTs, nil
}

// appendSample records a sample of family fam, within the sample limit, extending the family's run of samples.
func (p *parser) appendSample(s Sample, fam int32, m *famMeta) error {
	n := len(p.samples)
	if p.maxSamples > 0 && n >= p.maxSamples {
		return fmt.Errorf("exposition: %w: more than %d samples (at line %d)", ErrSampleLimit, p.maxSamples, p.lineNo)
	}
	p.samples = append(p.samples, s)
	if m.nRuns == 0 || p.runs[len(p.runs)-1].fam != fam {
		if m.nRuns == 0 {
			m.lo = int32(n) // #nosec G115 -- a body is at most 1 GiB (maxBodyMB), so counts of its lines fit in int32
		}
		m.nRuns++
		p.runs = append(p.runs, run{fam: fam, lo: int32(n), hi: int32(n)}) // #nosec G115 -- a body is at most 1 GiB (maxBodyMB), so counts of its lines fit in int32
	}
	p.runs[len(p.runs)-1].hi++
	m.n++
	return nil
}

// parseLabels parses label pairs after an opening '{' at line[i-1], appends
// them to p.labels and returns the index after the closing '}'.
func (p *parser) parseLabels(i int) (int, error) {
	line := p.line
	lo := len(p.labels)
	for {
		i = skipBlank(line, i)
		if i == len(line) {
			return 0, p.errorf(i, "unterminated label set")
		}
		if line[i] == '}' {
			return i + 1, nil
		}
		raw, next, err := p.lexName(i, false)
		if err != nil {
			return 0, err
		}
		// Consecutive lines mostly repeat the previous line's labels at the
		// same positions; comparing bytes is cheaper than an intern lookup.
		var prev *Label
		if k := len(p.labels) - lo; k < len(p.prev) {
			prev = &p.prev[k]
		}
		var name string
		if prev != nil && string(raw) == prev.Name && line[i] != '"' {
			name = prev.Name
		} else {
			if len(raw) == 0 {
				return 0, p.errorf(i, "invalid label name")
			}
			var ok bool
			if name, ok = p.intern(raw); !ok {
				return 0, p.errorf(i, "invalid UTF-8 in label name")
			}
			if name == "__name__" {
				return 0, p.errorf(i, "label name __name__ is reserved")
			}
		}
		j := skipBlank(line, next)
		if j == len(line) || line[j] != '=' {
			return 0, p.errorf(j, "expected '=' after label name %q", name)
		}
		j = skipBlank(line, j+1)
		if j == len(line) || line[j] != '"' {
			return 0, p.errorf(j, "expected '\"' to start the value of label %q", name)
		}
		end, esc := quotedEnd(line, j+1)
		if end < 0 {
			return 0, p.errorf(j, "unterminated value of label %q", name)
		}
		raw = line[j+1 : end]
		var value string
		if !esc && prev != nil && string(raw) == prev.Value {
			value = prev.Value
		} else {
			if esc {
				buf, bad, ok := unescape(p.buf[:0], raw)
				p.buf = buf
				if !ok {
					return 0, p.errorf(j+1+bad, "invalid escape sequence in value of label %q", name)
				}
				raw = buf
			}
			var ok bool
			if value, ok = p.intern(raw); !ok {
				return 0, p.errorf(j, "invalid UTF-8 in value of label %q", name)
			}
		}
		p.labels = append(p.labels, Label{Name: name, Value: value})
		i = skipBlank(line, end+1)
		if i == len(line) {
			return 0, p.errorf(i, "unterminated label set")
		}
		switch line[i] {
		case ',':
			i++
		case '}':
			return i + 1, nil
		default:
			return 0, p.errorf(i, "expected ',' or '}' after label value")
		}
	}
}

// checkLabels rejects duplicate label names and what expfmt would drop or
// reject for histograms and summaries: a bucket needs a float le, a summary
// value a float quantile, and _sum/_count lines have neither.
func (p *parser) checkLabels(ls Labels, fam *Family, r *resolved, col int) error {
	if len(ls) > 1 && p.hasDuplicate(ls) {
		return p.errorf(col, "duplicate label names in %q", r.name)
	}
	var special string
	switch fam.Type {
	case TypeHistogram, TypeGaugeHistogram:
		special = "le"
	case TypeSummary:
		special = "quantile"
	default:
		return nil
	}
	v, has := ls.Lookup(special)
	wanted := r.role == roleBucket || fam.Type == TypeSummary && r.role == roleValue
	switch {
	case r.role == roleValue && fam.Type != TypeSummary:
		return p.errorf(col, "sample %q of histogram %q needs a _bucket, _sum or _count suffix", r.name, fam.Name)
	case wanted && !has:
		return p.errorf(col, "%q has no %s label", r.name, special)
	case !wanted && has:
		return p.errorf(col, "unexpected %s label on %q", special, r.name)
	case wanted:
		if _, ok := parseFloat(v); !ok {
			return p.errorf(col, "invalid %s label value %q", special, v)
		}
	}
	return nil
}

func (p *parser) hasDuplicate(ls Labels) bool {
	if len(ls) <= 16 {
		for i := 1; i < len(ls); i++ {
			for j := 0; j < i; j++ {
				if ls[i].Name == ls[j].Name {
					return true
				}
			}
		}
		return false
	}
	// Sorting keeps absurdly long label sets from costing O(n²).
	names := p.dupNames[:0]
	for i := range ls {
		names = append(names, ls[i].Name)
	}
	slices.Sort(names)
	p.dupNames = names
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			return true
		}
	}
	return false
}

// skipExemplar validates and discards an OpenMetrics exemplar after its '#'
// at line[i-1]: {labels} value [timestamp].
func (p *parser) skipExemplar(i int) error {
	line := p.line
	j := skipBlank(line, i)
	if j == i || j == len(line) || line[j] != '{' {
		return p.errorf(j, "invalid exemplar, want # {labels} value [timestamp]")
	}
	mark := len(p.labels)
	end, err := p.parseLabels(j + 1)
	p.labels = p.labels[:mark]
	if err != nil {
		return err
	}
	k := skipBlank(line, end)
	if k == end || k == len(line) {
		return p.errorf(k, "exemplar without value")
	}
	vEnd := tokenEnd(line, k)
	if _, ok := parseFloat(line[k:vEnd]); !ok {
		return p.errorf(k, "invalid exemplar value %q", line[k:vEnd])
	}
	k = skipBlank(line, vEnd)
	if k < len(line) {
		tEnd := tokenEnd(line, k)
		if _, ok := parseSecondsMs(line[k:tEnd]); !ok {
			return p.errorf(k, "invalid exemplar timestamp %q", line[k:tEnd])
		}
		if k = skipBlank(line, tEnd); k < len(line) {
			return p.errorf(k, "unexpected text after exemplar")
		}
	}
	return nil
}
