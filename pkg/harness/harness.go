// Package harness starts the built plugin executables from dist/ exactly as Grafana does — a child process,
// the hashicorp go-plugin handshake, gRPC — and calls them through the SDK's pluginv2 clients, so end-to-end
// tests exercise the same serialization, instance management and shutdown path as production.
package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/grpcplugin"
	"github.com/grafana/grafana-plugin-sdk-go/genproto/pluginv2"
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
)

// Executable paths relative to dist/, without the _<os>_<arch> suffix Grafana appends.
const (
	AppExecutable        = "gpx_inferscope_app"
	DatasourceExecutable = "datasource/gpx_inferscope_datasource"
)

// RepoRoot finds the repository root (the directory holding go.mod) from the test's working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Executable returns dist/<name>_<GOOS>_<GOARCH>, the file Grafana would start on this machine, and fails the
// test when the backend has not been built: these tests exist to check the built artefact, not the sources.
func Executable(t testing.TB, name string) string {
	t.Helper()
	file := fmt.Sprintf("%s_%s_%s", name, runtime.GOOS, runtime.GOARCH)
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	p := filepath.Join(RepoRoot(t), "dist", filepath.FromSlash(file))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: build the backends first (go tool mage -v)", p)
	}
	return p
}

// Plugin is one running backend executable and the gRPC clients Grafana would use on it.
type Plugin struct {
	Diagnostics pluginv2.DiagnosticsClient
	Data        pluginv2.DataClient
	Resource    pluginv2.ResourceClient
	Stream      pluginv2.StreamClient

	client *goplugin.Client
	logs   *syncBuffer
}

// Start launches the executable with Grafana's handshake and dispenses the four plugin services.
// The process is stopped (and its clean shutdown checked) when the test ends.
func Start(t testing.TB, executable string, env ...string) *Plugin {
	t.Helper()
	p, err := Launch(executable, env...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("plugin log:\n%s", p.logs.String())
		}
	})
	return p
}

// Launch starts the executable as Grafana does, outside a test (cmd/inferscope-try); the caller stops it with Stop.
func Launch(executable string, env ...string) (*Plugin, error) {
	logs := &syncBuffer{}
	cmd := exec.Command(executable) // #nosec G204 -- the plugin executable the caller names, as Grafana runs it
	// Grafana hands plugins a minimal environment plus its own GF_* settings; mirror that instead of leaking ours.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "GF_VERSION=13.2.2"}, env...)
	dieWithParent(cmd)
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig: goplugin.HandshakeConfig{
			ProtocolVersion:  grpcplugin.ProtocolVersion,
			MagicCookieKey:   grpcplugin.MagicCookieKey,
			MagicCookieValue: grpcplugin.MagicCookieValue,
		},
		VersionedPlugins: map[int]goplugin.PluginSet{
			grpcplugin.ProtocolVersion: {
				"diagnostics": &grpcplugin.DiagnosticsGRPCPlugin{},
				"resource":    &grpcplugin.ResourceGRPCPlugin{},
				"data":        &grpcplugin.DataGRPCPlugin{},
				"stream":      &grpcplugin.StreamGRPCPlugin{},
			},
		},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		SkipHostEnv:      true,
		StartTimeout:     30 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name: filepath.Base(executable), Output: logs, Level: hclog.Debug,
		}),
	})
	p := &Plugin{client: client, logs: logs}
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("start %s: %w\n%s", executable, err, logs.String())
	}
	services := map[string]any{}
	for _, name := range []string{"diagnostics", "resource", "data", "stream"} {
		raw, err := rpc.Dispense(name)
		if err != nil {
			client.Kill()
			return nil, fmt.Errorf("dispense %s: %w", name, err)
		}
		services[name] = raw
	}
	p.Diagnostics = services["diagnostics"].(pluginv2.DiagnosticsClient)
	p.Resource = services["resource"].(pluginv2.ResourceClient)
	p.Data = services["data"].(pluginv2.DataClient)
	p.Stream = services["stream"].(pluginv2.StreamClient)
	return p, nil
}

// Stop shuts the plugin down the way Grafana does and reports an error unless it exited on its own.
func (p *Plugin) Stop() error {
	if p.client.Exited() {
		return nil
	}
	p.client.Kill()
	if !p.client.Exited() {
		return errors.New("plugin process still running after Kill")
	}
	// go-plugin falls back to SIGKILL and logs this when the process ignores the graceful shutdown request.
	if strings.Contains(p.logs.String(), "plugin failed to exit gracefully") {
		return errors.New("plugin did not exit gracefully when asked to stop")
	}
	return nil
}

// Exited reports whether the plugin process has ended.
func (p *Plugin) Exited() bool { return p.client.Exited() }

// PID is the plugin process's id, e.g. to read its memory use from /proc.
func (p *Plugin) PID() int {
	if rc := p.client.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// RSS is the plugin process's resident memory in bytes (Linux only; 0 elsewhere or once it exited).
func (p *Plugin) RSS() int64 { return procStatusKB(p.PID(), "VmRSS:") << 10 }

// PeakRSS is the plugin process's largest resident memory so far (VmHWM) in bytes (Linux only; 0 elsewhere).
func (p *Plugin) PeakRSS() int64 { return procStatusKB(p.PID(), "VmHWM:") << 10 }

// CPUTime is the user plus system CPU time the plugin process has used so far (Linux only; 0 elsewhere). The
// kernel counts it in clock ticks, 10 ms on Linux (USER_HZ is 100 on every architecture Go supports there).
func (p *Plugin) CPUTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID()))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; utime and stime are fields 14 and 15, counted after its ')'.
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	_, _ = fmt.Sscan(f[11], &utime)
	_, _ = fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// procStatusKB reads one "<key> <n> kB" line of /proc/<pid>/status.
func procStatusKB(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			var kb int64
			_, _ = fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb
		}
	}
	return 0
}

// Logs returns what the plugin wrote to its log so far.
func (p *Plugin) Logs() string { return p.logs.String() }

// DataSource describes a configured data source instance as Grafana stores it.
type DataSource struct {
	UID      string
	Name     string
	URL      string
	JSONData any               // marshalled to the instance's jsonData
	Secure   map[string]string // decrypted secureJsonData
	Updated  time.Time         // a new value makes the SDK build a fresh instance
	// BasicAuthUser turns on basic auth with Secure["basicAuthPassword"], as the HTTP settings editor does.
	BasicAuthUser string
}

// DataSourceContext builds the PluginContext Grafana sends with a data source request.
func DataSourceContext(t testing.TB, ds DataSource, user *pluginv2.User) *pluginv2.PluginContext {
	t.Helper()
	pc, err := NewDataSourceContext(ds, user)
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

// NewDataSourceContext is DataSourceContext outside a test: it reports a jsonData that does not marshal.
func NewDataSourceContext(ds DataSource, user *pluginv2.User) (*pluginv2.PluginContext, error) {
	if ds.UID == "" {
		ds.UID = "inferscope-test"
	}
	if ds.Name == "" {
		ds.Name = "vLLM (test)"
	}
	if ds.Updated.IsZero() {
		ds.Updated = time.Unix(1700000000, 0)
	}
	jsonData, err := marshal(ds.JSONData)
	if err != nil {
		return nil, err
	}
	return &pluginv2.PluginContext{
		OrgId:    1,
		PluginId: "inferscope-vllm-datasource",
		User:     user,
		DataSourceInstanceSettings: &pluginv2.DataSourceInstanceSettings{
			Id: 1, Uid: ds.UID, Name: ds.Name, Url: ds.URL,
			JsonData:                jsonData,
			DecryptedSecureJsonData: ds.Secure,
			LastUpdatedMS:           ds.Updated.UnixMilli(),
			BasicAuthEnabled:        ds.BasicAuthUser != "",
			BasicAuthUser:           ds.BasicAuthUser,
		},
	}, nil
}

// AppContext builds the PluginContext Grafana sends with an app request.
func AppContext(t testing.TB, jsonData any, secure map[string]string, user *pluginv2.User) *pluginv2.PluginContext {
	t.Helper()
	return &pluginv2.PluginContext{
		OrgId:    1,
		PluginId: "inferscope-vllm-app",
		User:     user,
		AppInstanceSettings: &pluginv2.AppInstanceSettings{
			JsonData:                mustJSON(t, jsonData),
			DecryptedSecureJsonData: secure,
			LastUpdatedMS:           time.Unix(1700000000, 0).UnixMilli(),
		},
	}
}

// User returns a signed-in Grafana user with the given org role ("Admin", "Editor" or "Viewer").
func User(role string) *pluginv2.User {
	login := strings.ToLower(role)
	return &pluginv2.User{Login: login, Name: role + " User", Email: login + "@example.com", Role: role}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// marshal is the JSON Grafana sends for a settings or query value: {} for nil, raw bytes as they are.
func marshal(v any) ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// CheckHealth calls the plugin's health check.
func (p *Plugin) CheckHealth(ctx context.Context, pc *pluginv2.PluginContext) (*backend.CheckHealthResult, error) {
	res, err := p.Diagnostics.CheckHealth(ctx, &pluginv2.CheckHealthRequest{PluginContext: pc})
	if err != nil {
		return nil, err
	}
	return backend.FromProto().CheckHealthResponse(res), nil
}

// Query is one panel query as Grafana sends it.
type Query struct {
	RefID         string
	QueryType     string
	JSON          any // the query model; marshalled as-is
	From, To      time.Time
	Interval      time.Duration
	MaxDataPoints int64
}

// QueryData sends the queries in one request and decodes the Arrow frames of the answer.
func (p *Plugin) QueryData(ctx context.Context, t testing.TB, pc *pluginv2.PluginContext, queries ...Query) (*backend.QueryDataResponse, error) {
	t.Helper()
	for _, q := range queries {
		mustJSON(t, q.JSON) // a model that does not marshal is the test's mistake, not the plugin's answer
	}
	return p.Query(ctx, pc, queries...)
}

// Query is QueryData outside a test: Grafana's defaults for an empty range, interval and point count.
func (p *Plugin) Query(ctx context.Context, pc *pluginv2.PluginContext, queries ...Query) (*backend.QueryDataResponse, error) {
	req := &pluginv2.QueryDataRequest{PluginContext: pc, Headers: map[string]string{}}
	for _, q := range queries {
		if q.To.IsZero() {
			q.To = time.Now()
		}
		if q.From.IsZero() {
			q.From = q.To.Add(-5 * time.Minute)
		}
		if q.Interval == 0 {
			q.Interval = 5 * time.Second
		}
		if q.MaxDataPoints == 0 {
			q.MaxDataPoints = 1000
		}
		model, err := marshal(q.JSON)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.RefID, err)
		}
		req.Queries = append(req.Queries, &pluginv2.DataQuery{
			RefId: q.RefID, QueryType: q.QueryType, MaxDataPoints: q.MaxDataPoints,
			IntervalMS: q.Interval.Milliseconds(),
			TimeRange:  &pluginv2.TimeRange{FromEpochMS: q.From.UnixMilli(), ToEpochMS: q.To.UnixMilli()},
			Json:       model,
		})
	}
	res, err := p.Data.QueryData(ctx, req)
	if err != nil {
		return nil, err
	}
	return backend.FromProto().QueryDataResponse(res)
}

// ResourceResponse is a complete CallResource answer, reassembled from its stream of chunks.
type ResourceResponse struct {
	Status  int
	Headers map[string][]string
	Body    []byte
}

// CallResource calls a resource route (path without a leading slash, e.g. "endpoints" or "values?label=x").
// Like Grafana, it sends the path without the query string and the full URL separately.
func (p *Plugin) CallResource(ctx context.Context, pc *pluginv2.PluginContext, method, path string, body []byte) (*ResourceResponse, error) {
	route, _, _ := strings.Cut(path, "?")
	stream, err := p.Resource.CallResource(ctx, &pluginv2.CallResourceRequest{
		PluginContext: pc, Path: route, Method: method, Url: path, Body: body,
		Headers: map[string]*pluginv2.StringList{"Content-Type": {Values: []string{"application/json"}}},
	})
	if err != nil {
		return nil, err
	}
	out := &ResourceResponse{Headers: map[string][]string{}}
	for first := true; ; first = false {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if first {
				return nil, errors.New("resource call returned no response")
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if first {
			out.Status = int(chunk.Code)
			for k, v := range chunk.Headers {
				out.Headers[k] = v.Values
			}
		}
		out.Body = append(out.Body, chunk.Body...)
	}
}

// SubscribeStream asks the plugin whether a Live channel path may be subscribed to.
func (p *Plugin) SubscribeStream(ctx context.Context, pc *pluginv2.PluginContext, path string, data any) (*pluginv2.SubscribeStreamResponse, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return p.Stream.SubscribeStream(ctx, &pluginv2.SubscribeStreamRequest{PluginContext: pc, Path: path, Data: b})
}

// RunStream starts a stream as Grafana does for the first subscriber and returns its packets until ctx ends.
func (p *Plugin) RunStream(ctx context.Context, pc *pluginv2.PluginContext, path string, data any) (<-chan *pluginv2.StreamPacket, <-chan error, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, nil, err
	}
	stream, err := p.Stream.RunStream(ctx, &pluginv2.RunStreamRequest{PluginContext: pc, Path: path, Data: b})
	if err != nil {
		return nil, nil, err
	}
	packets, errs := make(chan *pluginv2.StreamPacket), make(chan error, 1)
	go func() {
		defer close(packets)
		for {
			pkt, err := stream.Recv()
			if err != nil {
				errs <- err
				return
			}
			select {
			case packets <- pkt:
			case <-ctx.Done():
				errs <- ctx.Err()
				return
			}
		}
	}()
	return packets, errs, nil
}

// syncBuffer is a bytes.Buffer safe for the plugin's log goroutines and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
