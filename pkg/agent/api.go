// Package agent is inferscope-agent, the small authenticated HTTPS service that runs beside a vLLM or vLLM-Ascend
// server and owns its local profiler controls, and the client the app uses to call it.
//
// Grafana rarely shares a disk with the inference host (Kubernetes, separate machines), so the app cannot open
// ms_service_profiler_config.json there. The agent can: it switches metric_enable with the same locked, atomic,
// allow-listed edit as the app's shared-file mode (pkg/profilerconfig), checks service_metrics_symbols.yaml
// (pkg/symbols) against the running vLLM, and drives vLLM's torch profiler (POST /start_profile, /stop_profile),
// stopping a profile itself when its time is up whoever asked for it.
//
// Every route but /healthz needs the agent's token as a bearer token, compared in constant time before anything
// else; the agent refuses to start without one. Each caller is rate limited on its own budget (the token holder's
// reads and changes apart, callers without the token and /healthz per source address), bodies are bounded and
// decoded strictly, each change is logged as one audit line with the Grafana user the app passes in HeaderUser, and
// refusals are counted and summed up. The agent never calls anything but the local vLLM it was given.
package agent

// Routes of the agent's API. Paths under /v1 need the token.
const (
	PathHealth         = "/healthz"
	PathProfilerConfig = "/v1/profiler-config"
	PathMetricEnable   = "/v1/profiler-config/metric-enable"
	PathSymbols        = "/v1/symbols"
	PathProfile        = "/v1/profile"
	PathProfileStop    = "/v1/profile/stop"
	PathTraces         = "/v1/traces"
)

// HeaderUser carries the Grafana login the app acts for, into the agent's audit log.
const HeaderUser = "X-Grafana-User"

// Limits the agent enforces; the app and its page read them from here.
const (
	// MaxBodyBytes bounds a request body: every body is a small JSON object.
	MaxBodyBytes = 4 << 10
	// MaxProfileSeconds bounds one torch profile: traces grow by hundreds of MB a minute under load.
	MaxProfileSeconds = 600
	// MaxTraceBytes bounds one trace download through the agent (and Grafana); larger traces are copied on the host.
	MaxTraceBytes = 64 << 20
	// MaxTraces bounds the trace list, newest first.
	MaxTraces = 200
	// MinTokenLength is the shortest token the agent starts with.
	MinTokenLength = 16
)

// ProfilerConfig is metric_enable and enable of the agent's ms_service_profiler_config.json.
type ProfilerConfig struct {
	Path string `json:"path"`
	// Exists is false for a missing file, which the profiler treats as metric_enable 0.
	Exists       bool   `json:"exists"`
	MetricEnable int    `json:"metricEnable"`
	Enable       int    `json:"enable"`
	Modified     string `json:"modified,omitempty"`
	// Problem describes a file the profiler reads differently from what it looks like (a string "1", say).
	Problem string `json:"problem,omitempty"`
}

// SetValue is the body that switches metric_enable: {"value": 0} or {"value": 1}.
type SetValue struct {
	Value *int `json:"value"`
}

// ProfileStart is the body that starts a torch profile of Seconds (1–MaxProfileSeconds).
type ProfileStart struct {
	Seconds int `json:"seconds"`
}

// ProfileStatus is the torch profiler's state as the agent drives it.
type ProfileStatus struct {
	// Available is false when the agent has no trace directory (vLLM's VLLM_TORCH_PROFILER_DIR), so cannot profile.
	Available bool   `json:"available"`
	Running   bool   `json:"running"`
	StartedAt string `json:"startedAt,omitempty"`
	EndsAt    string `json:"endsAt,omitempty"`
	StartedBy string `json:"startedBy,omitempty"`
	// LastError is why the last start or stop failed, cleared by the next success.
	LastError string `json:"lastError,omitempty"`
	// StopPending is true while a failed stop is being retried: StopAttempts failed so far, the next at
	// NextStopAttempt.
	StopPending     bool   `json:"stopPending,omitempty"`
	StopAttempts    int    `json:"stopAttempts,omitempty"`
	NextStopAttempt string `json:"nextStopAttempt,omitempty"`
	MaxSeconds      int    `json:"maxSeconds"`
	LastStopped     string `json:"lastStopped,omitempty"`
}

// Trace is one finished trace file.
type Trace struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
}

// TraceList is the trace directory's files, newest first, at most MaxTraces.
type TraceList struct {
	Dir       string  `json:"dir"`
	Traces    []Trace `json:"traces"`
	Truncated bool    `json:"truncated,omitempty"`
	MaxBytes  int64   `json:"maxBytes"`
}

// ErrorBody is every error's body.
type ErrorBody struct {
	Error string `json:"error"`
}
