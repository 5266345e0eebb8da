package sim

import (
	"bufio"
	"io"
	"sort"
	"strings"
)

type metricType int

const (
	typeGauge metricType = iota
	typeCounter
	typeHistogram
)

func (t metricType) String() string {
	switch t {
	case typeCounter:
		return "counter"
	case typeHistogram:
		return "histogram"
	default:
		return "gauge"
	}
}

// style is how a given exporter library lays out the same data.
type style int

const (
	// stylePython is prometheus_client in a single process: counters get "_total", and every
	// counter or histogram child is followed by a separate "<name>_created" gauge family.
	stylePython style = iota
	// stylePythonMultiproc is prometheus_client's MultiProcessCollector: no _created series and
	// histograms listed as all _sum samples, then buckets and _count per child.
	stylePythonMultiproc
	// styleRust is the Rust prometheus crate used by Dynamo: integers without ".0", le last.
	styleRust
)

type label struct{ name, value string }

type child struct {
	labels  []label
	value   float64
	hist    *histogram
	created float64 // Unix seconds; only rendered in stylePython
}

type family struct {
	name  string // base name: counters without "_total" in the Python styles
	help  string
	typ   metricType
	style style
	kids  []child
	// noCreated marks counters built by custom collectors (gc, process), which have no _created.
	noCreated bool
}

// exposition collects families in the order a real server would print them.
type exposition struct {
	fams []*family
	// createdBase and createdStep give each child its own creation time, a few microseconds
	// apart, as prometheus_client records time.time() when a child is created.
	createdBase float64
	createdSeq  int
	// noCreated is prometheus_client.disable_created_metrics(), which V0 calls process-wide.
	noCreated bool
	// allow, when set, says which families the server registers; add hands back a detached family for the others.
	allow func(name string) bool
}

func (x *exposition) add(name, help string, typ metricType, st style) *family {
	f := &family{name: name, help: help, typ: typ, style: st}
	if x.allow == nil || x.allow(name) {
		x.fams = append(x.fams, f)
	}
	return f
}

func (x *exposition) nextCreated() float64 {
	x.createdSeq++
	return x.createdBase + float64(x.createdSeq)*1.3e-5
}

func (f *family) set(value float64, labels ...label) {
	f.kids = append(f.kids, child{labels: labels, value: value})
}

func (f *family) setHist(h *histogram, labels ...label) {
	f.kids = append(f.kids, child{labels: labels, hist: h})
}

func (x *exposition) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, f := range x.fams {
		x.writeFamily(bw, f)
	}
	return bw.Flush()
}

func (x *exposition) writeFamily(w *bufio.Writer, f *family) {
	name := f.name
	if f.typ == typeCounter && f.style != styleRust {
		name += "_total"
	}
	writeHeader(w, name, f.help, f.typ.String())
	fmtv := pyFloat
	if f.style == styleRust {
		fmtv = rustFloat
	}
	switch f.typ {
	case typeHistogram:
		if f.style == stylePythonMultiproc {
			for _, k := range f.kids {
				writeSample(w, f.name+"_sum", k.labels, nil, fmtv(k.hist.sum), f.style)
			}
		}
		for _, k := range f.kids {
			cum := k.hist.cumulative()
			for i, c := range cum {
				le := "+Inf"
				if i < len(k.hist.bounds) {
					le = fmtv(k.hist.bounds[i])
				}
				writeSample(w, f.name+"_bucket", k.labels, &label{"le", le}, fmtv(c), f.style)
			}
			switch f.style {
			case stylePython:
				writeSample(w, f.name+"_count", k.labels, nil, fmtv(k.hist.count), f.style)
				writeSample(w, f.name+"_sum", k.labels, nil, fmtv(k.hist.sum), f.style)
			case stylePythonMultiproc:
				writeSample(w, f.name+"_count", k.labels, nil, fmtv(k.hist.count), f.style)
			case styleRust:
				writeSample(w, f.name+"_sum", k.labels, nil, fmtv(k.hist.sum), f.style)
				writeSample(w, f.name+"_count", k.labels, nil, fmtv(k.hist.count), f.style)
			}
		}
	default:
		for _, k := range f.kids {
			writeSample(w, name, k.labels, nil, fmtv(k.value), f.style)
		}
	}
	if f.style == stylePython && f.typ != typeGauge && !f.noCreated && !x.noCreated && len(f.kids) > 0 {
		writeHeader(w, f.name+"_created", f.help, "gauge")
		for _, k := range f.kids {
			writeSample(w, f.name+"_created", k.labels, nil, pyFloat(x.nextCreated()), f.style)
		}
	}
}

func writeHeader(w *bufio.Writer, name, help, typ string) {
	w.WriteString("# HELP ")
	w.WriteString(name)
	w.WriteByte(' ')
	w.WriteString(helpEscaper.Replace(help))
	w.WriteString("\n# TYPE ")
	w.WriteString(name)
	w.WriteByte(' ')
	w.WriteString(typ)
	w.WriteByte('\n')
}

// writeSample prints one line. Python sorts all label names, le included; the Rust crate sorts the
// metric's own labels and appends le last.
func writeSample(w *bufio.Writer, name string, labels []label, le *label, value string, st style) {
	w.WriteString(name)
	ls := make([]label, 0, len(labels)+1)
	ls = append(ls, labels...)
	if le != nil && st != styleRust {
		ls = append(ls, *le)
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].name < ls[j].name })
	if le != nil && st == styleRust {
		ls = append(ls, *le)
	}
	if len(ls) > 0 {
		w.WriteByte('{')
		for i, l := range ls {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(l.name)
			w.WriteString(`="`)
			w.WriteString(labelEscaper.Replace(l.value))
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(value)
	w.WriteByte('\n')
}

// lower is how Dynamo's frontend spells model names on request metrics.
func lower(s string) string { return strings.ToLower(s) }
