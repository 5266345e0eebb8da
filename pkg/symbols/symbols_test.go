package symbols

import (
	"errors"
	"strings"
	"testing"
)

// shipped is msServiceProfiler's service_metrics_symbols.yaml as it ships: the meta entries and one custom timer.
const shipped = `# ===== Meta =====
- symbol: vllm.v1.engine.core:DPEngineCoreProc.add_request
  min_version: "0.9.1"
  handler: ms_service_profiler.patcher.vllm.handlers.v1.meta_handlers:init_data_parallel

- symbol: vllm.v1.metrics.loggers:StatLoggerManager.record
  min_version: "0.9.1"
  handler: ms_service_profiler.patcher.vllm.handlers.v1.meta_handlers:record

- symbol: vllm.v1.core.sched.scheduler:Scheduler.make_stats
  min_version: "0.9.1"
  handler: ms_service_profiler.patcher.vllm.handlers.v1.meta_handlers:make_stats

# ===== Custom Metrics =====
- symbol: vllm.entrypoints.openai.serving_chat:OpenAIServingChat.create_chat_completion
  min_version: "0.9.1"
  metrics:
    - name: server:create_chat_completion:duration
      type: timer
`

func TestShippedFileIsClean(t *testing.T) {
	entries, err := Parse([]byte(shipped))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[3].Line != 15 || entries[3].Metrics[0].Name != "server:create_chat_completion:duration" {
		t.Fatalf("parsed %+v", entries)
	}
	names := map[string]bool{"vllm_profiling_server:create_chat_completion:duration_bucket": true}
	c := Check(entries, "0.11.0", names)
	if len(c.Problems) != 0 {
		t.Fatalf("problems in the shipped file: %+v", c.Problems)
	}
	if !c.Exposed["vllm_profiling_server:create_chat_completion:duration"] {
		t.Errorf("the timer on /metrics is not seen: %v", c.Exposed)
	}
	if got := Timers(entries, "0.11.0"); len(got) != 1 || got[0] != "vllm_profiling_server:create_chat_completion:duration" {
		t.Errorf("timers %v", got)
	}
}

// TestEachMistake feeds one entry with each kind of mistake and checks the message the operator gets.
func TestEachMistake(t *testing.T) {
	cases := []struct {
		name     string
		entry    string
		version  string
		severity string
		want     string
	}{
		{"no symbol", "- metrics: [{name: a, type: timer}]", "", Error, "no symbol"},
		{"symbol without a colon", "- symbol: vllm.engine.LLMEngine.step\n  metrics: [{name: a, type: timer}]", "", Error, "is not module:Class.method"},
		{"symbol with a space", "- symbol: 'vllm.engine: LLMEngine.step'\n  metrics: [{name: a, type: timer}]", "", Error, "is not module:Class.method"},
		{"bad handler", "- symbol: a.b:C.d\n  handler: handlers.record", "", Error, "handler \"handlers.record\" is not package.module:function"},
		{"records nothing", "- symbol: a.b:C.d", "", Error, "neither a handler nor metrics"},
		{"bad min_version", "- symbol: a.b:C.d\n  min_version: latest\n  handler: h:f", "", Error, "min_version \"latest\" is not a version"},
		{"empty range", "- symbol: a.b:C.d\n  min_version: '0.11'\n  max_version: '0.9.2'\n  handler: h:f", "", Error, "below min_version"},
		{"vLLM too old", "- symbol: a.b:C.d\n  min_version: '0.10.0'\n  handler: h:f", "0.9.2", Warning, "older than min_version 0.10.0"},
		{"vLLM too new", "- symbol: a.b:C.d\n  max_version: '0.10.2'\n  handler: h:f", "0.11.0rc1", Warning, "newer than max_version 0.10.2"},
		{"metric without a name", "- symbol: a.b:C.d\n  metrics: [{type: timer}]", "", Error, "a metric has no name"},
		{"metric name with a dash", "- symbol: a.b:C.d\n  metrics: [{name: chat-latency, type: timer}]", "", Error, "\"vllm_profiling_chat-latency\" is not a valid Prometheus metric name"},
		{"unknown type", "- symbol: a.b:C.d\n  metrics: [{name: a, type: summary}]", "", Error, "type \"summary\" is not one of timer, counter, gauge, histogram"},
		{"unsorted buckets", "- symbol: a.b:C.d\n  metrics: [{name: a, type: histogram, buckets: [1, 0.5]}]", "", Error, "buckets must be in increasing order"},
		{"duplicate name", "- symbol: a.b:C.d\n  metrics: [{name: a, type: timer}]\n- symbol: a.b:C.e\n  metrics: [{name: a, type: timer}]", "", Error, "declared twice (first in the entry on line 1)"},
		{"misspelt key", "- symbol: a.b:C.d\n  min_verison: '0.9'\n  handler: h:f", "", Warning, "unknown key \"min_verison\""},
		{"metrics not a list", "- symbol: a.b:C.d\n  metrics: timer", "", Error, "fields have the wrong shape"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := Parse([]byte(tc.entry))
			if err != nil {
				t.Fatal(err)
			}
			c := Check(entries, tc.version, nil)
			if len(c.Problems) != 1 {
				t.Fatalf("want one problem, got %+v", c.Problems)
			}
			p := c.Problems[0]
			if p.Severity != tc.severity || !strings.Contains(p.Message, tc.want) || p.Line == 0 {
				t.Errorf("got %s %q on line %d, want %s containing %q", p.Severity, p.Message, p.Line, tc.severity, tc.want)
			}
		})
	}
}

func TestParseRefusesWhatIsNotAList(t *testing.T) {
	for name, doc := range map[string]string{
		"mapping":      "symbol: a.b:C.d\n",
		"scalar entry": "- a.b:C.d\n",
		"not YAML":     "- symbol: [unclosed\n",
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Parse([]byte(strings.Repeat("#", MaxFileBytes+1))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an oversized file: %v", err)
	}
	if _, err := Parse([]byte(strings.Repeat("- symbol: a:b\n", MaxEntries+1))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too many entries: %v", err)
	}
	// An alias bomb in an entry (lists of lists, the only way aliases can grow) fails on its shape, in one short message.
	bomb := "- a: &a [{name: x, type: timer}, {name: x, type: timer}, {name: x, type: timer}, {name: x, type: timer}]\n"
	for _, l := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		prev := string(rune(l[0] - 1))
		bomb += "  " + l + ": &" + l + " [" + strings.Repeat("*"+prev+", ", 7) + "*" + prev + "]\n"
	}
	bomb += "  symbol: a.b:C.d\n  metrics: *i\n"
	entries, err := Parse([]byte(bomb))
	if err != nil {
		t.Fatal(err)
	}
	if c := Check(entries, "", nil); len(c.Problems) == 0 || !strings.Contains(c.Problems[0].Message, "wrong shape") {
		t.Errorf("an alias bomb: %+v", c.Problems)
	} else if len(c.Problems[0].Message) > 300 {
		t.Errorf("the message runs to %d bytes", len(c.Problems[0].Message))
	}
}

func TestVersionOrder(t *testing.T) {
	cases := []struct {
		a, b string
		less bool
	}{
		{"0.9.1", "0.10.0", true}, {"0.10.0", "0.9.1", false}, {"0.9", "0.9.0", false}, {"0.9.0", "0.9", false},
		{"0.11.0rc1", "0.11.0", false}, {"v0.8.5", "0.9", true}, {"0.11.0+ascend", "0.11.1", true},
	}
	for _, c := range cases {
		a, okA := ParseVersion(c.a)
		b, okB := ParseVersion(c.b)
		if !okA || !okB || a.Less(b) != c.less {
			t.Errorf("%s < %s: got %v (parsed %v %v), want %v", c.a, c.b, a.Less(b), okA, okB, c.less)
		}
	}
	for _, bad := range []string{"", "latest", "0..1", "1.2.3.4.5", "99999999999"} {
		if _, ok := ParseVersion(bad); ok {
			t.Errorf("%q parsed as a version", bad)
		}
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(shipped), "0.11.0")
	f.Add([]byte("- symbol: a.b:C.d\n  metrics: [{name: a, type: timer}]"), "0.9")
	f.Fuzz(func(t *testing.T, doc []byte, version string) {
		entries, err := Parse(doc)
		if err != nil {
			return
		}
		c := Check(entries, version, map[string]bool{})
		for _, p := range c.Problems {
			if p.Message == "" || (p.Severity != Error && p.Severity != Warning) {
				t.Fatalf("bad problem %+v", p)
			}
		}
		_ = Timers(entries, version)
	})
}
