package exposition

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"
)

// ParseOptions tunes Parse. The zero value detects the format, keeps every
// family and has no sample limit.
type ParseOptions struct {
	// Format of the body; FormatAuto detects OpenMetrics by its "# EOF" line.
	Format Format
	// Keep, if set, is called once per family name (in OpenMetrics a counter
	// family is named without _total); families it rejects are left out of
	// the Scrape and their lines are skipped without further validation.
	Keep func(family string) bool
	// MaxSamples, if positive, fails the parse once more than this many kept
	// samples are seen; the error wraps ErrSampleLimit.
	MaxSamples int
	// NormalizeFloatLabels stores le and quantile label values as Prometheus 3 does when it scrapes (see
	// NormalizeFloatLabel): a sample's le is rewritten while the last TYPE line read said histogram, its quantile
	// while it said summary. That is textparse's rule, whose metric type only TYPE lines set, so an untyped sample
	// after a histogram is treated like one. Values strconv.ParseFloat reads are normalised before they are
	// checked, so le="1_000" is accepted here as Prometheus 3 accepts it.
	NormalizeFloatLabels bool
}

// Parse parses an exposition body. On malformed input it returns a
// *ParseError naming the line; see the package documentation for what is
// rejected. The returned Scrape does not reference data; a caller done with it may Release it.
func Parse(data []byte, opts ParseOptions) (*Scrape, error) {
	p := newParser(data, opts)
	defer giveScratch(p.scratch)
	if err := p.run(); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// DetectFormat returns FormatOpenMetrics if the body's last line is "# EOF",
// else FormatText.
func DetectFormat(data []byte) Format {
	d := bytes.TrimSuffix(data, []byte("\n"))
	d = bytes.TrimSuffix(d, []byte("\r"))
	if bytes.HasSuffix(d, []byte("# EOF")) && (len(d) == 5 || d[len(d)-6] == '\n') {
		return FormatOpenMetrics
	}
	return FormatText
}

type parser struct {
	format     Format
	keep       func(string) bool
	maxSamples int

	data   []byte
	line   []byte
	lineNo int

	*scratch        // the maps and tables no Scrape keeps, reused by the next parse (reuse.go)
	held      *held // storage for the Scrape, released storage reused (reuse.go)
	samples   []Sample
	labels    []Label
	labelsCap int    // initial capacity of labels
	prev      Labels // labels of the last sample, to reuse its strings
	lastName  []byte // the last sample name resolved, and its index
	lastRes   int32
	buf       []byte   // unescaped strings
	dupNames  []string // scratch for duplicate checks on long label sets

	normalize  bool   // ParseOptions.NormalizeFloatLabels
	floatLabel string // "le" after a histogram TYPE line, "quantile" after a summary one, else ""
}

// resolved caches which family a name belongs to and in which role; the
// answer never changes once given, because resolution prefers exact family
// names and a family's type can only be set while it has no samples.
type resolved struct {
	name string
	fam  int32
	role role
}

type famMeta struct {
	hasHelp, hasType, hasUnit, drop bool
	nRuns, lo, n                    int32 // runs, first sample, samples
}

// run is a stretch of consecutive samples of one family; families split over
// several runs are regrouped at the end.
type run struct {
	fam    int32
	lo, hi int32
}

func newParser(data []byte, opts ParseOptions) *parser {
	p := &parser{
		format:     opts.Format,
		keep:       opts.Keep,
		maxSamples: opts.MaxSamples,
		normalize:  opts.NormalizeFloatLabels,
		data:       data,
		scratch:    takeScratch(),
	}
	if p.famIndex == nil {
		p.famIndex = make(map[string]int32, 64)
	}
	if p.format == FormatAuto {
		p.format = DetectFormat(data)
	}
	// Each sample needs its own line and each label its own '=', so these
	// counts bound the arrays; the byte-based caps keep bodies of blank lines
	// or '=' from reserving memory out of proportion to real content. If a
	// cap proves too small the arrays grow and finish compacts the labels.
	nSamples := min(bytes.Count(data, []byte{'\n'})+1, len(data)/32+16)
	if p.maxSamples > 0 {
		nSamples = min(nSamples, p.maxSamples+1)
	}
	p.held = takeHeld(nSamples, min(bytes.Count(data, []byte{'='}), len(data)/16+16))
	p.samples, p.labels = p.held.samples, p.held.labels
	p.labelsCap = cap(p.labels)
	return p
}

func (p *parser) run() error {
	data := p.data
	for pos := 0; pos < len(data); {
		p.lineNo++
		nl := bytes.IndexByte(data[pos:], '\n')
		var line []byte
		if nl < 0 {
			line = data[pos:]
			pos = len(data)
		} else {
			line = data[pos : pos+nl]
			pos += nl + 1
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		p.line = line
		eof, err := p.parseLine()
		if err != nil {
			return err
		}
		if eof {
			if pos < len(data) {
				p.lineNo++
				p.line = data[pos:]
				if nl := bytes.IndexByte(p.line, '\n'); nl >= 0 {
					p.line = p.line[:nl]
				}
				return p.errorf(0, "content after # EOF")
			}
			return nil
		}
		// A body cut at a line boundary is indistinguishable from a whole
		// one, but a cut mid-line must not yield a shortened value.
		if nl < 0 && skipBlank(line, 0) < len(line) {
			return p.errorf(len(line), "missing newline at end of input (truncated body?)")
		}
	}
	if p.format == FormatOpenMetrics {
		p.lineNo = max(p.lineNo, 1)
		return p.errorf(0, "missing # EOF at end of OpenMetrics input (truncated body?)")
	}
	return nil
}

// errorf returns a *ParseError for the current line with an excerpt around
// column col.
func (p *parser) errorf(col int, format string, args ...any) error {
	return &ParseError{Line: p.lineNo, Msg: fmt.Sprintf(format, args...), Near: excerpt(p.line, col)}
}

func (p *parser) parseLine() (eof bool, err error) {
	line := p.line
	i := skipBlank(line, 0)
	if i == len(line) {
		return false, nil
	}
	if line[i] == '#' {
		return p.parseComment(i + 1)
	}
	return false, p.parseSample(i)
}

// parseComment handles "# HELP", "# TYPE", "# UNIT", "# EOF" and plain
// comments, with expfmt's tolerance: "#HELP" counts, and HELP/TYPE lines that
// stop after the keyword or the name are ignored.
func (p *parser) parseComment(i int) (bool, error) {
	line := p.line
	om := p.format == FormatOpenMetrics
	i = skipBlank(line, i)
	kwStart := i
	i = tokenEnd(line, i)
	kw := line[kwStart:i]
	switch {
	case string(kw) == "HELP" || string(kw) == "TYPE" || om && string(kw) == "UNIT":
	case om && string(kw) == "EOF":
		if skipBlank(line, i) != len(line) {
			return false, p.errorf(i, "unexpected text after # EOF")
		}
		return true, nil
	case om:
		return false, p.errorf(kwStart, "invalid OpenMetrics comment, want HELP, TYPE, UNIT or EOF")
	default:
		return false, nil
	}
	i = skipBlank(line, i)
	if i == len(line) {
		return false, nil
	}
	name, next, err := p.lexName(i, true)
	if err != nil {
		return false, err
	}
	if next == len(line) {
		return false, nil
	}
	if len(name) == 0 || !isBlank(line[next]) {
		return false, p.errorf(next, "invalid metric name in %s line", kw)
	}
	ri, err := p.resolve(name, i)
	if err != nil {
		return false, err
	}
	f := p.res[ri].fam
	fam, m := &p.fams[f], &p.meta[f]
	i = skipBlank(line, next)
	if i == len(line) {
		return false, nil
	}
	text := line[i:]
	switch string(kw) {
	case "HELP":
		if m.hasHelp {
			return false, p.errorf(i, "second HELP line for %q", fam.Name)
		}
		buf, bad, ok := unescape(p.buf[:0], text)
		p.buf = buf
		if !ok {
			return false, p.errorf(i+bad, "invalid escape sequence in help text")
		}
		m.hasHelp = true
		if !m.drop {
			fam.Help = string(buf)
		}
	case "TYPE":
		if m.hasType {
			return false, p.errorf(i, "second TYPE line for %q, or TYPE after its samples", fam.Name)
		}
		t, ok := parseType(bytes.TrimRight(text, " \t"), om)
		if !ok {
			return false, p.errorf(i, "unknown metric type %q", text)
		}
		fam.Type, m.hasType = t, true
		switch t {
		case TypeHistogram:
			p.floatLabel = "le"
		case TypeSummary:
			p.floatLabel = "quantile"
		default:
			p.floatLabel = ""
		}
	case "UNIT":
		if m.hasUnit {
			return false, p.errorf(i, "second UNIT line for %q", fam.Name)
		}
		m.hasUnit = true
		fam.Unit = string(bytes.TrimRight(text, " \t"))
	}
	return false, nil
}

// parseType accepts what expfmt accepts in text (case-insensitive, including
// gauge_histogram) and the OpenMetrics 1.0 types in OpenMetrics.
func parseType(b []byte, om bool) (Type, bool) {
	var lower [16]byte
	if len(b) > len(lower) {
		return 0, false
	}
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	switch s := string(lower[:len(b)]); {
	case s == "counter":
		return TypeCounter, true
	case s == "gauge":
		return TypeGauge, true
	case s == "histogram":
		return TypeHistogram, true
	case s == "gaugehistogram":
		return TypeGaugeHistogram, true
	case s == "summary":
		return TypeSummary, true
	case !om && s == "untyped":
		return TypeUntyped, true
	case !om && s == "gauge_histogram":
		return TypeGaugeHistogram, true
	case om && s == "info":
		return TypeInfo, true
	case om && s == "stateset":
		return TypeStateset, true
	case om && s == "unknown":
		return TypeUnknown, true
	}
	return 0, false
}

// lexName reads a metric (or label) name at line[i]: unquoted, or quoted
// with escapes. It returns the unescaped name (valid until the next call) and
// the index after it. An empty name is not an error here.
func (p *parser) lexName(i int, metric bool) ([]byte, int, error) {
	line := p.line
	if i < len(line) && line[i] == '"' {
		end, esc := quotedEnd(line, i+1)
		if end < 0 {
			return nil, 0, p.errorf(i, "unterminated quoted name")
		}
		raw := line[i+1 : end]
		if !esc {
			return raw, end + 1, nil
		}
		buf, bad, ok := unescape(p.buf[:0], raw)
		p.buf = buf
		if !ok {
			return nil, 0, p.errorf(i+1+bad, "invalid escape sequence in quoted name")
		}
		return buf, end + 1, nil
	}
	start, cont := uint8(cLabelStart), uint8(cLabelCont)
	if metric {
		start, cont = cMetricStart, cMetricCont
	}
	j := i
	if j < len(line) && charClass[line[j]]&start != 0 {
		j++
		for j < len(line) && charClass[line[j]]&cont != 0 {
			j++
		}
	}
	return line[i:j], j, nil
}

// resolve maps a sample or metadata name to its family, creating the family
// if no existing one claims the name. col locates errors.
func (p *parser) resolve(name []byte, col int) (int32, error) {
	if p.lastName != nil && string(name) == string(p.lastName) {
		return p.lastRes, nil
	}
	if ri, ok := p.names[string(name)]; ok {
		p.lastName, p.lastRes = append(p.lastName[:0], name...), ri
		return ri, nil
	}
	if len(name) == 0 || !utf8.Valid(name) {
		return 0, p.errorf(col, "invalid metric name %q", name)
	}
	s := string(name)
	r := resolved{name: s, fam: -1}
	if f, ok := p.famIndex[s]; ok {
		r.fam = f
	} else {
		for k := range suffixes {
			sfx := &suffixes[k]
			if len(s) <= len(sfx.suffix) || s[len(s)-len(sfx.suffix):] != sfx.suffix {
				continue
			}
			if f, ok := p.famIndex[s[:len(s)-len(sfx.suffix)]]; ok && sfx.allows(p.format, p.fams[f].Type) {
				r.fam, r.role = f, sfx.role
				break
			}
		}
	}
	if r.fam < 0 {
		r.fam = int32(len(p.fams)) // #nosec G115 -- a body is at most 1 GiB (maxBodyMB), so counts of its families fit in int32
		p.famIndex[s] = r.fam
		p.fams = append(p.fams, Family{Name: s})
		p.meta = append(p.meta, famMeta{drop: p.keep != nil && !p.keep(s)})
	}
	ri := int32(len(p.res)) // #nosec G115 -- a body is at most 1 GiB (maxBodyMB), so counts of its lines fit in int32
	p.res = append(p.res, r)
	p.names[s] = ri
	return ri, nil
}

// intern returns a string equal to b, allocating only the first time; b is
// checked for valid UTF-8 then, so every interned string is valid.
func (p *parser) intern(b []byte) (string, bool) {
	if s, ok := p.strs[string(b)]; ok {
		return s, true
	}
	if !utf8.Valid(b) {
		return "", false
	}
	s := string(b)
	p.strs[s] = s
	return s, true
}

// finish assembles the Scrape: families' samples become subslices of one
// array, regrouped only if some family was split over several runs.
func (p *parser) finish() *Scrape {
	samples := p.samples
	split := false
	for i := range p.meta {
		if p.meta[i].nRuns > 1 {
			split = true
			break
		}
	}
	if split {
		samples = make([]Sample, len(p.samples))
		off := int32(0)
		for i := range p.meta {
			p.meta[i].lo = off
			off += p.meta[i].n
		}
		next := make([]int32, len(p.meta))
		for _, r := range p.runs {
			m := &p.meta[r.fam]
			copy(samples[m.lo+next[r.fam]:], p.samples[r.lo:r.hi])
			next[r.fam] += r.hi - r.lo
		}
	}
	labels := p.labels
	if split || cap(p.labels) != p.labelsCap {
		// Appends moved the labels or samples were regrouped: lay the
		// labels out again in one array, in sample order.
		labels = make([]Label, 0, len(p.labels))
		for i := range samples {
			n := len(labels)
			labels = append(labels, samples[i].Labels...)
			if len(labels) > n {
				samples[i].Labels = labels[n:len(labels):len(labels)]
			}
		}
	}
	dropped := 0
	for i := range p.fams {
		m := &p.meta[i]
		if m.drop {
			dropped++
			continue
		}
		if m.n > 0 {
			p.fams[i].Samples = samples[m.lo : m.lo+m.n : m.lo+m.n]
		}
	}
	h := p.held
	h.samples, h.labels = samples, labels
	s := &Scrape{Format: p.format, Families: p.fams, index: p.famIndex, held: h}
	if dropped == 0 {
		// The scrape takes the parser's own families and index: they are not the next parse's.
		p.fams, p.famIndex = nil, nil
	} else {
		// One family more of room: a scraper adds up (Add).
		s.Families = slices.Grow(h.families[:0], len(p.fams)-dropped+1)
		s.index = h.index
		if s.index == nil {
			s.index = make(map[string]int32, len(p.fams)-dropped+1)
		}
		for i := range p.fams {
			if !p.meta[i].drop {
				s.index[p.fams[i].Name] = int32(len(s.Families)) // #nosec G115 -- a body is at most 1 GiB (maxBodyMB), so counts of its families fit in int32
				s.Families = append(s.Families, p.fams[i])
			}
		}
		h.families, h.index = s.Families, s.index
	}
	return s
}
