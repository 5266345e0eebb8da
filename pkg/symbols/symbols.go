// Package symbols reads and checks msServiceProfiler's service_metrics_symbols.yaml, the file that tells the
// vLLM-Ascend profiler which Python methods to hook and which vllm_profiling_* metrics to record there.
//
// The profiler reads the file once, when vLLM starts, and skips what it cannot use without saying much: a symbol it
// cannot import, a version range that excludes the running vLLM, a metric name Prometheus refuses. Check reports
// each of those up front, per entry, so an operator sees why a timer is missing from /metrics before restarting.
package symbols

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// Limits on what Parse accepts: the file is written by hand and holds tens of entries.
const (
	MaxFileBytes = 256 << 10
	MaxEntries   = 1000
)

// MetricPrefix is what the profiler puts before every custom metric's name.
const MetricPrefix = vllm.AscendPrefix

// Types are the metric types the profiler records.
var Types = []string{"timer", "counter", "gauge", "histogram"}

// Entry is one hooked method.
type Entry struct {
	Symbol     string   `yaml:"symbol" json:"symbol"`
	MinVersion string   `yaml:"min_version" json:"minVersion,omitempty"`
	MaxVersion string   `yaml:"max_version" json:"maxVersion,omitempty"`
	Handler    string   `yaml:"handler" json:"handler,omitempty"`
	Metrics    []Metric `yaml:"metrics" json:"metrics,omitempty"`
	// Line is where the entry starts in the file, for messages.
	Line int `yaml:"-" json:"line"`

	unknown   []string // keys the profiler does not read
	decodeErr string   // why the entry's fields could not be read
}

// knownKeys are the keys of an entry the profiler reads.
var knownKeys = []string{"symbol", "min_version", "max_version", "handler", "metrics"}

// Metric is one metric an entry records.
type Metric struct {
	Name    string    `yaml:"name" json:"name"`
	Type    string    `yaml:"type" json:"type"`
	Expr    string    `yaml:"expr" json:"expr,omitempty"`
	Buckets []float64 `yaml:"buckets" json:"buckets,omitempty"`
}

// Problem is one thing wrong with the file; Entry is -1 for the file as a whole.
type Problem struct {
	Entry    int    `json:"entry"`
	Line     int    `json:"line,omitempty"`
	Severity string `json:"severity"` // Error: the profiler will not use it; Warning: it will, not as meant
	Message  string `json:"message"`
}

// Severities of a Problem.
const (
	Error   = "error"
	Warning = "warning"
)

// ErrTooLarge is returned for a file over MaxFileBytes or MaxEntries.
var ErrTooLarge = errors.New("symbols file too large")

// Parse reads the file's entries. A file that is not a YAML list of mappings is an error; what is wrong inside an
// entry (fields of the wrong shape included) is left to Check.
func Parse(doc []byte) ([]Entry, error) {
	if len(doc) > MaxFileBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(doc), MaxFileBytes)
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("not valid YAML: %v", err)
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	list := root.Content[0]
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: the file must be a list of entries (- symbol: …)", list.Line)
	}
	if len(list.Content) > MaxEntries {
		return nil, fmt.Errorf("%w: %d entries, at most %d", ErrTooLarge, len(list.Content), MaxEntries)
	}
	out := make([]Entry, 0, len(list.Content))
	for _, n := range list.Content {
		var e Entry
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: each entry must be a mapping with a symbol", n.Line)
		}
		if err := n.Decode(&e); err != nil {
			e = Entry{decodeErr: firstLines(err.Error(), 2)}
		}
		e.Line = n.Line
		for k := 0; k+1 < len(n.Content); k += 2 {
			if key := n.Content[k].Value; !contains(knownKeys, key) {
				e.unknown = append(e.unknown, key)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Checked is a parsed file with its problems and, where the deployment's /metrics was read, which metrics it
// carries.
type Checked struct {
	Entries  []Entry   `json:"entries"`
	Problems []Problem `json:"problems"`
	// Exposed maps each custom metric's full name (with MetricPrefix) to whether /metrics carries it; nil when
	// /metrics was not read.
	Exposed map[string]bool `json:"exposed,omitempty"`
}

var (
	// dotted is a Python dotted name: module path or qualified name.
	dotted = `[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`
	// symbolPattern is module:Qualname, as the profiler splits it to import the module and walk the attributes.
	symbolPattern = regexp.MustCompile(`^` + dotted + `:` + dotted + `$`)
	// metricName is Prometheus's metric name syntax.
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
)

// Check reports what is wrong with each entry: symbol and handler syntax, the version range (against vllmVersion
// when it is known), metric names as Prometheus sees them once prefixed, duplicate names and unknown types. names,
// when not nil, are the sample names of the deployment's /metrics: Check then records which metrics appear.
func Check(entries []Entry, vllmVersion string, names map[string]bool) Checked {
	c := Checked{Entries: entries, Problems: []Problem{}}
	add := func(i int, sev, format string, args ...any) {
		p := Problem{Entry: i, Severity: sev, Message: fmt.Sprintf(format, args...)}
		if i >= 0 {
			p.Line = entries[i].Line
		}
		c.Problems = append(c.Problems, p)
	}
	running, runningOK := ParseVersion(vllmVersion)
	if names != nil {
		c.Exposed = map[string]bool{}
	}
	first := map[string]int{} // full metric name → entry that declared it first
	for i, e := range entries {
		if e.decodeErr != "" {
			add(i, Error, "the entry's fields have the wrong shape: %s", e.decodeErr)
			continue
		}
		for _, k := range e.unknown {
			add(i, Warning, "unknown key %q: the profiler ignores it (keys: %s)", k, strings.Join(knownKeys, ", "))
		}
		switch {
		case e.Symbol == "":
			add(i, Error, "no symbol: each entry names the method to hook as module:Class.method")
		case !symbolPattern.MatchString(e.Symbol):
			add(i, Error, "symbol %q is not module:Class.method (a dotted module path, a colon, a dotted attribute path)", e.Symbol)
		}
		if e.Handler != "" && !symbolPattern.MatchString(e.Handler) {
			add(i, Error, "handler %q is not package.module:function", e.Handler)
		}
		if e.Handler == "" && len(e.Metrics) == 0 {
			add(i, Error, "neither a handler nor metrics: the entry records nothing")
		}
		checkVersions(i, e, running, runningOK, vllmVersion, add)
		for _, m := range e.Metrics {
			full := MetricPrefix + m.Name
			switch {
			case m.Name == "":
				add(i, Error, "a metric has no name")
				continue
			case !metricName.MatchString(full):
				add(i, Error, "metric %q: %q is not a valid Prometheus metric name (letters, digits, '_' and ':' only, not starting with a digit)", m.Name, full)
			}
			if j, dup := first[full]; dup {
				add(i, Error, "metric %q is declared twice (first in the entry on line %d): the profiler keeps one", m.Name, entries[j].Line)
			} else {
				first[full] = i
			}
			if !contains(Types, m.Type) {
				add(i, Error, "metric %q: type %q is not one of %s", m.Name, m.Type, strings.Join(Types, ", "))
			}
			if len(m.Buckets) > 0 && !sort.Float64sAreSorted(m.Buckets) {
				add(i, Error, "metric %q: buckets must be in increasing order", m.Name)
			}
			if names != nil {
				c.Exposed[full] = exposed(names, full, m.Type)
			}
		}
	}
	return c
}

// checkVersions reports a malformed or empty range, and a range that leaves out the running vLLM (the profiler then
// skips the entry).
func checkVersions(i int, e Entry, running Version, runningOK bool, runningText string, add func(int, string, string, ...any)) {
	lo, loOK := ParseVersion(e.MinVersion)
	hi, hiOK := ParseVersion(e.MaxVersion)
	if e.MinVersion != "" && !loOK {
		add(i, Error, "min_version %q is not a version such as \"0.9.1\"", e.MinVersion)
	}
	if e.MaxVersion != "" && !hiOK {
		add(i, Error, "max_version %q is not a version such as \"0.11.0\"", e.MaxVersion)
	}
	if loOK && hiOK && hi.Less(lo) {
		add(i, Error, "max_version %s is below min_version %s: no vLLM matches", e.MaxVersion, e.MinVersion)
		return
	}
	if !runningOK {
		return
	}
	if loOK && running.Less(lo) {
		add(i, Warning, "vLLM %s is older than min_version %s: the profiler skips this entry", runningText, e.MinVersion)
	}
	if hiOK && hi.Less(running) {
		add(i, Warning, "vLLM %s is newer than max_version %s: the profiler skips this entry", runningText, e.MaxVersion)
	}
}

// exposed reports whether /metrics carries a metric of this type: histograms and timers as <name>_bucket or _count,
// counters as <name>_total or <name>.
func exposed(names map[string]bool, full, typ string) bool {
	switch typ {
	case "timer", "histogram":
		return names[full+"_bucket"] || names[full+"_count"]
	case "counter":
		return names[full+"_total"] || names[full]
	}
	return names[full]
}

// firstLines keeps a decoder's message short: it repeats one line per bad element.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		return strings.TrimSpace(strings.Join(lines[:n], " ")) + " …"
	}
	return strings.TrimSpace(strings.Join(lines, " "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Version is a release number's numeric parts: 0.9.1 → [0 9 1]. Pre-release and local suffixes (rc1, +ascend) are
// dropped: the profiler compares releases.
type Version []int

// versionPattern is digits separated by dots, optionally followed by a suffix such as rc1, .dev3 or +cu124.
var versionPattern = regexp.MustCompile(`^v?(\d+(?:\.\d+){0,3})(?:[.+-]?[A-Za-z][A-Za-z0-9.+-]*)?$`)

// ParseVersion reads a version such as "0.9.1", "0.10.1rc1" or "0.11.0+ascend".
func ParseVersion(s string) (Version, bool) {
	m := versionPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return nil, false
	}
	var v Version
	for _, p := range strings.Split(m[1], ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n > 1_000_000 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, true
}

// Less orders versions part by part, a missing part counting as 0 (0.9 == 0.9.0).
func (v Version) Less(w Version) bool {
	for i := 0; i < max(len(v), len(w)); i++ {
		a, b := at(v, i), at(w, i)
		if a != b {
			return a < b
		}
	}
	return false
}

func at(v Version, i int) int {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// Timers are the full names of the timer metrics the entries active on vllmVersion declare, in file order: what
// the profiler records on that vLLM (unknown versions keep every entry).
func Timers(entries []Entry, vllmVersion string) []string {
	running, ok := ParseVersion(vllmVersion)
	var out []string
	for _, e := range entries {
		if ok {
			if lo, okLo := ParseVersion(e.MinVersion); okLo && running.Less(lo) {
				continue
			}
			if hi, okHi := ParseVersion(e.MaxVersion); okHi && hi.Less(running) {
				continue
			}
		}
		for _, m := range e.Metrics {
			if m.Type == "timer" && metricName.MatchString(MetricPrefix+m.Name) && !contains(out, MetricPrefix+m.Name) {
				out = append(out, MetricPrefix+m.Name)
			}
		}
	}
	return out
}
