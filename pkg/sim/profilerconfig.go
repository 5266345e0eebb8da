package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ProfilerConfigName is the file name msServiceProfiler's switch conventionally has.
const ProfilerConfigName = "ms_service_profiler_config.json"

// ProfilerSwitch follows metric_enable in ms_service_profiler_config.json the way the Ascend tool
// does: re-read on a poll, hot-switched without restart, created with defaults when missing, and
// treated as off (never fatal) when unreadable or malformed.
type ProfilerSwitch struct {
	path string
	log  *log.Logger

	mu       sync.Mutex
	enabled  bool
	last     []byte // file content at the last poll, to report a problem once per change
	lastErr  string
	created  bool
	reported bool
}

// NewProfilerSwitch watches path; an empty path means the env variable was not set, so metric
// collection stays off, as in the tool.
func NewProfilerSwitch(path string, logger *log.Logger) *ProfilerSwitch {
	if logger == nil {
		logger = log.New(os.Stderr, "", log.LstdFlags)
	}
	return &ProfilerSwitch{path: path, log: logger}
}

// Enabled reports whether vllm_profiling_* metrics are currently collected.
func (p *ProfilerSwitch) Enabled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.enabled
}

// Run polls the file every interval until ctx ends.
func (p *ProfilerSwitch) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.Check()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check reads the file once and applies metric_enable.
func (p *ProfilerSwitch) Check() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.path == "" {
		if !p.reported {
			p.log.Printf("SERVICE_PROF_CONFIG_PATH is not set: vllm_profiling_* metric collection stays off")
			p.reported = true
		}
		p.apply(false)
		return
	}
	b, err := os.ReadFile(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		p.last, p.lastErr = nil, ""
		if !p.created {
			p.created = true
			p.createDefault()
		}
		p.apply(false)
		return
	}
	if err != nil {
		p.problem("cannot read " + p.path + ": " + err.Error())
		p.apply(false)
		return
	}
	if bytes.Equal(b, p.last) {
		return
	}
	p.last = b
	// Only changed content gets here, so a malformed file is reported once per edit.
	p.lastErr = ""
	on, perr := parseMetricEnable(b)
	if perr != "" {
		p.problem(p.path + ": " + perr)
	}
	p.apply(on)
}

func (p *ProfilerSwitch) problem(msg string) {
	if msg != p.lastErr {
		p.log.Printf("Invalid profiler config, metric collection disabled: %s", msg)
		p.lastErr = msg
	}
}

func (p *ProfilerSwitch) apply(on bool) {
	if on == p.enabled {
		return
	}
	p.enabled = on
	if on {
		p.log.Printf("Metric collection enabled")
	} else {
		p.log.Printf("Metric collection disabled")
	}
}

// parseMetricEnable returns the switch and a description of what is wrong with the file, if
// anything. An absent key means off; 1 or true means on.
func parseMetricEnable(b []byte) (bool, string) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return false, "not a JSON object: " + err.Error()
	}
	raw, ok := doc["metric_enable"]
	if !ok {
		return false, ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, "metric_enable: " + err.Error()
	}
	switch x := v.(type) {
	case bool:
		return x, ""
	case float64:
		if x != 0 && x != 1 {
			return false, "metric_enable must be 0 or 1"
		}
		return x == 1, ""
	default:
		return false, "metric_enable must be 0, 1, true or false"
	}
}

// createDefault writes the file the tool writes when none exists, atomically (temp file and
// rename) so a reader never sees half of it.
func (p *ProfilerSwitch) createDefault() {
	if !strings.HasSuffix(p.path, ".json") {
		p.log.Printf("Config path must end with .json: %s", p.path)
		return
	}
	home, _ := os.UserHomeDir()
	def := struct {
		Enable               int    `json:"enable"`
		MetricEnable         int    `json:"metric_enable"`
		ProfDir              string `json:"prof_dir"`
		ProfilerLevel        string `json:"profiler_level"`
		ACLTaskTime          int    `json:"acl_task_time"`
		ACLProfTaskTimeLevel string `json:"acl_prof_task_time_level"`
		APIFilter            string `json:"api_filter"`
		KernelFilter         string `json:"kernel_filter"`
		TimeLimit            int    `json:"timelimit"`
		Domain               string `json:"domain"`
		HostSystemUsageFreq  int    `json:"host_system_usage_freq"`
		NPUMemoryUsageFreq   int    `json:"npu_memory_usage_freq"`
	}{ProfDir: filepath.Join(home, ".ms_server_profiler") + "/", ProfilerLevel: "INFO",
		HostSystemUsageFreq: -1, NPUMemoryUsageFreq: -1}
	b, err := json.MarshalIndent(def, "", "    ")
	if err != nil {
		return
	}
	dir := filepath.Dir(p.path)
	tmp, err := os.CreateTemp(dir, "temp_")
	if err != nil {
		p.log.Printf("Automatic config file generation failed: %v", err)
		return
	}
	_, werr := tmp.Write(append(b, '\n'))
	// CreateTemp makes the file 0600; the profiler's own file is world-readable, and Grafana (another user on a
	// shared volume) must read it to show its state.
	if err := tmp.Chmod(0o644); err != nil && werr == nil {
		werr = err
	}
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		p.log.Printf("Automatic config file generation failed: %v", errors.Join(werr, cerr))
		return
	}
	if err := os.Rename(tmp.Name(), p.path); err != nil {
		os.Remove(tmp.Name())
		p.log.Printf("Automatic config file generation failed: %v", err)
		return
	}
	p.log.Printf("Created default profiler config %s (metric_enable: 0)", p.path)
}
