package promtest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/inferscope/inferscope-vllm/pkg/exposition"
)

// The scale-out engines' releases, as scripts/engines.sh builds them into CacheDir()/<name>-<version>/.
const (
	VictoriaMetrics151Version = "v1.151.0"
	ThanosVersion             = "v0.42.5"
	CortexVersion             = "v1.21.1"
)

// ReplicaLabel is the external label that tells the HA pair's two Prometheus apart (replica="a" and "b"), and the
// querier's --query.replica-label in ThanosHA.
const ReplicaLabel = "replica"

// ShardLabel is the external label of ThanosShards' two Prometheus (shard="0" and "1"); nothing deduplicates it.
const ShardLabel = "shard"

// Tenant is the X-Scope-OrgID the Cortex engine's samples are written under and its queries must send.
const Tenant = "inferscope-test"

// TenantHeader is the header Cortex (and Mimir) read the tenant from.
const TenantHeader = "X-Scope-OrgID"

// scaleBinary is where scripts/engines.sh puts a scale-out engine's executable.
func scaleBinary(name, version, bin string) string {
	return filepath.Join(CacheDir(), name+"-"+version, bin)
}

// proc is one server process of a test, stopped (and its log shown when the test failed) by t.Cleanup.
type proc struct {
	name string
	// addrs are the loopback addresses it listens on, in the order startProc's args took them.
	addrs  []string
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited and been waited for
}

// addr is the address the process answers HTTP on.
func (p proc) addr() string { return p.addrs[0] }

// stop kills the process and waits for it.
func (p proc) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// newAddr is where startProc takes its addresses: freeAddr, or a test's choice.
var newAddr = freeAddr

// serverStarts bounds how often startProc starts one server.
const serverStarts = 3

// startProc launches bin with the arguments args makes for n loopback addresses (freeAddr's), logging to a file in
// dir, and polls http://addrs[0]+ready until it answers 200 (bounded: a minute). freeAddr closes the port it found
// before the server listens on it, so another process can take it meanwhile; the server then exits, and is started
// again on fresh addresses (at most serverStarts times in all). One that exits while another answers its readiness
// probe is caught the same way: it is checked again after answering.
func startProc(t testing.TB, name, dir, bin string, n int, args func(addrs []string) []string, ready string) proc {
	t.Helper()
	for try := 1; ; try++ {
		addrs := make([]string, n)
		for i := range addrs {
			addrs[i] = newAddr(t)
		}
		p, log := launch(t, name, dir, bin, args(addrs), try)
		p.addrs = addrs
		err := poll("http://"+addrs[0]+ready, nil, 60*time.Second, nil, p.exited)
		if err == nil {
			return p
		}
		if errors.Is(err, errGone) && try < serverStarts {
			t.Logf("%s (%s) %v; starting it again on other addresses. Its log (last 2 kB):\n%s",
				name, p.cmd.ProcessState, err, tail(log(), 2<<10))
			continue
		}
		t.Fatalf("%s: %v", name, err)
	}
}

// launch starts one try of a server, its output in dir/name.log (name.N.log for the N-th try), killed and waited
// for by t.Cleanup, which shows the log when the test failed; log reads it.
func launch(t testing.TB, name, dir, bin string, args []string, try int) (p proc, log func() []byte) {
	t.Helper()
	file := filepath.Join(dir, name+".log")
	if try > 1 {
		file = filepath.Join(dir, fmt.Sprintf("%s.%d.log", name, try))
	}
	logf, err := os.Create(file) // #nosec G304 -- a test's own directory
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...) // #nosec G204 -- a test server with test-made arguments
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir // what a server writes to its working directory (Cortex's active-query-tracker) stays in the test's
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p = proc{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	log = func() []byte {
		b, _ := os.ReadFile(file) // #nosec G304 -- a test's own directory
		return b
	}
	t.Cleanup(func() {
		p.stop()
		_ = logf.Close()
		if t.Failed() {
			t.Logf("%s log (last 8 kB):\n%s", name, tail(log(), 8<<10))
		}
	})
	return p, log
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// waitOK polls url until it answers 200 and, when accept is set, accept takes the body; bounded by timeout.
func waitOK(t testing.TB, name, url string, header http.Header, timeout time.Duration, accept func([]byte) bool) {
	t.Helper()
	if err := poll(url, header, timeout, accept, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// errGone is poll's error when the process it waited for exited.
var errGone = errors.New("exited")

// poll GETs url with header until it answers 200 and, when accept is set, accept takes the body; bounded by
// timeout. It stops with errGone as soon as gone closes, and when gone has closed by the time the answer came
// (another process answered for the one it waits for). A nil gone never closes.
func poll(url string, header http.Header, timeout time.Duration, accept func([]byte) bool, gone <-chan struct{}) error {
	c := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for {
		if closed(gone) {
			return fmt.Errorf("%w before %s answered (last: %s)", errGone, url, last)
		}
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (accept == nil || accept(body)) {
				if closed(gone) {
					return fmt.Errorf("%w while %s answered: another process holds the address", errGone, url)
				}
				return nil
			}
			last = fmt.Sprintf("%s: %.200s", resp.Status, body)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready at %s after %s (last: %s)", url, timeout, last)
		}
		select {
		case <-gone:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// closed reports whether c is closed; a nil c never is.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// startPrometheus starts one Prometheus 3 of a scale-out setup: its scrape targets, external labels, extra
// configuration (remote_write) and data (a backfilled TSDB, or empty).
func startPrometheus(t testing.TB, name string, opts Options, external map[string]string, extra, openMetrics string) proc {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if openMetrics != "" {
		data = backfill(t, Prometheus3, openMetrics)
	}
	cfg := config(opts, true)
	if len(external) > 0 {
		keys := make([]string, 0, len(external))
		for k := range external {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("  external_labels:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "    %s: %q\n", k, external[k])
		}
		cfg = strings.Replace(cfg, "scrape_configs:\n", b.String()+"scrape_configs:\n", 1)
	}
	cfg += extra
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProc(t, name, dir, EngineBinary(t, Prometheus3, "prometheus"), 1, func(addrs []string) []string {
		return []string{
			"--config.file=" + file,
			"--storage.tsdb.path=" + data,
			"--storage.tsdb.retention.time=100y",
			// The sidecar wants blocks it could upload: no compaction beyond the 2h head blocks.
			"--storage.tsdb.min-block-duration=2h", "--storage.tsdb.max-block-duration=2h",
			"--web.listen-address=" + addrs[0],
			"--log.level=warn",
		}
	}, "/-/ready")
}

// startThanos starts a Prometheus 3 with a Thanos sidecar for each of the given stores (external labels and
// samples), and a Thanos querier over all sidecars, deduplicating replicaLabel when it is set. It returns the
// querier's address once the querier sees every sidecar, and the stores in order.
func startThanos(t testing.TB, opts Options, stores []thanosStore, replicaLabel string) (string, []runningStore) {
	t.Helper()
	thanos := EngineBinary(t, ThanosHA, "thanos")
	dir := t.TempDir()
	var endpoints []string
	var running []runningStore
	for i, st := range stores {
		sopts := opts
		sopts.Targets = st.targets
		prom := startPrometheus(t, fmt.Sprintf("prometheus-%d", i), sopts, st.external, "", st.openMetrics)
		// The sidecar's HTTP address first (its readiness), then its gRPC address (the querier's endpoint).
		sidecar := startProc(t, fmt.Sprintf("sidecar-%d", i), dir, thanos, 2, func(addrs []string) []string {
			return []string{
				"sidecar",
				"--prometheus.url=http://" + prom.addr(),
				"--tsdb.path=" + filepath.Join(dir, fmt.Sprintf("unused-tsdb-%d", i)),
				"--http-address=" + addrs[0], "--grpc-address=" + addrs[1],
				"--log.level=warn",
			}
		}, "/-/ready")
		endpoints = append(endpoints, sidecar.addrs[1])
		running = append(running, runningStore{prometheus: prom, sidecar: sidecar, endpoint: sidecar.addrs[1]})
	}
	query := startProc(t, "thanos-query", dir, thanos, 2, func(addrs []string) []string {
		args := []string{"query", "--http-address=" + addrs[0], "--grpc-address=" + addrs[1], "--log.level=warn"}
		for _, e := range endpoints {
			args = append(args, "--endpoint="+e)
		}
		if replicaLabel != "" {
			args = append(args, "--query.replica-label="+replicaLabel)
		}
		return args
	}, "/-/ready")
	http := query.addr()
	// The querier finds its endpoints in the background: wait until it lists every sidecar with its labels.
	waitOK(t, "thanos-query stores", "http://"+http+"/api/v1/stores", nil, 60*time.Second, func(b []byte) bool {
		var r struct {
			Data map[string][]struct {
				LastError *string           `json:"lastError"`
				LabelSets []json.RawMessage `json:"labelSets"`
			} `json:"data"`
		}
		if json.Unmarshal(b, &r) != nil {
			return false
		}
		n := 0
		for _, ss := range r.Data {
			for _, s := range ss {
				if (s.LastError == nil || *s.LastError == "") && len(s.LabelSets) > 0 {
					n++
				}
			}
		}
		return n == len(stores)
	})
	return http, running
}

// runningStore is one store of a running Thanos engine: the Prometheus and its sidecar's gRPC address, which the
// querier names the store by.
type runningStore struct {
	prometheus, sidecar proc
	endpoint            string
}

// thanosStore is one Prometheus behind a sidecar.
type thanosStore struct {
	external    map[string]string
	targets     []Target
	openMetrics string
}

// startThanosHA is the HA pair: two Prometheus with the same targets and samples, replica="a" and "b".
func startThanosHA(t testing.TB, opts Options) (string, []runningStore) {
	t.Helper()
	var stores []thanosStore
	for _, r := range []string{"a", "b"} {
		stores = append(stores, thanosStore{external: map[string]string{ReplicaLabel: r}, targets: opts.Targets, openMetrics: opts.OpenMetrics})
	}
	label := ReplicaLabel
	if opts.NoDedup {
		label = ""
	}
	return startThanos(t, opts, stores, label)
}

// startThanosShards is two Prometheus each holding half the endpoints (targets, or samples by their instance or
// endpoint label), shard="0" and "1", merged by one querier.
func startThanosShards(t testing.TB, opts Options) (string, []runningStore) {
	t.Helper()
	stores := []thanosStore{{external: map[string]string{ShardLabel: "0"}}, {external: map[string]string{ShardLabel: "1"}}}
	for i, tg := range opts.Targets {
		stores[i%2].targets = append(stores[i%2].targets, tg)
	}
	if opts.OpenMetrics != "" {
		halves := splitOpenMetrics(opts.OpenMetrics)
		stores[0].openMetrics, stores[1].openMetrics = halves[0], halves[1]
	}
	return startThanos(t, opts, stores, "")
}

// splitOpenMetrics deals the endpoints of OpenMetrics text (by their instance, else endpoint, label) to two halves,
// alternately in order of first appearance, so each half holds whole endpoints; a half without any is "" (that
// shard's Prometheus starts empty).
func splitOpenMetrics(om string) [2]string {
	var out [2]strings.Builder
	shard := map[string]int{}
	for line := range strings.Lines(om) {
		if strings.HasPrefix(line, "#") {
			if !strings.HasPrefix(line, "# EOF") {
				out[0].WriteString(line)
				out[1].WriteString(line)
			}
			continue
		}
		key := labelValue(line, "instance")
		if key == "" {
			key = labelValue(line, "endpoint")
		}
		s, ok := shard[key]
		if !ok {
			s = len(shard) % 2
			shard[key] = s
		}
		out[s].WriteString(line)
	}
	var halves [2]string
	for i := range out {
		if slices.Contains(slices.Collect(maps.Values(shard)), i) {
			halves[i] = out[i].String() + "# EOF\n"
		}
	}
	return halves
}

// labelValue reads name="value" from a sample line (values without escaped quotes, as the tests write them).
func labelValue(line, name string) string {
	for _, sep := range []string{"{", ","} {
		if i := strings.Index(line, sep+name+`="`); i >= 0 {
			rest := line[i+len(sep)+len(name)+2:]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return rest[:j]
			}
		}
	}
	return ""
}

// cortexConfig is Cortex's single-process configuration with blocks on the local filesystem (after the project's
// docs/configuration/single-process-config-blocks-local.yaml at v1.21.1), multi-tenant, on loopback only, and
// with ingestion limits lifted so a test's backfill goes in at once. The alertmanager's gossip is off: it listens on
// 0.0.0.0:9094 by default, a fixed port that a second Cortex (tests run in parallel) cannot bind. The distributor
// waits 30 s for its ingester, not 2 s: on a loaded machine the in-process call timed out and a push failed.
func cortexConfig(dir, httpPort, grpcPort string) string {
	return fmt.Sprintf(`auth_enabled: true
server:
  http_listen_address: 127.0.0.1
  http_listen_port: %[2]s
  grpc_listen_address: 127.0.0.1
  grpc_listen_port: %[3]s
  log_level: warn
  grpc_server_max_recv_msg_size: 104857600
  grpc_server_max_send_msg_size: 104857600
  grpc_server_max_concurrent_streams: 1000
distributor:
  shard_by_all_labels: true
  remote_timeout: 30s
  pool:
    health_check_ingesters: true
  ring:
    instance_addr: 127.0.0.1
    kvstore:
      store: inmemory
ingester_client:
  grpc_client_config:
    max_recv_msg_size: 104857600
    max_send_msg_size: 104857600
ingester:
  lifecycler:
    address: 127.0.0.1
    min_ready_duration: 0s
    final_sleep: 0s
    join_after: 0s
    num_tokens: 512
    ring:
      kvstore:
        store: inmemory
      replication_factor: 1
blocks_storage:
  backend: filesystem
  filesystem:
    dir: %[1]s/blocks
  tsdb:
    dir: %[1]s/tsdb
  bucket_store:
    sync_dir: %[1]s/tsdb-sync
compactor:
  data_dir: %[1]s/compactor
  sharding_ring:
    instance_addr: 127.0.0.1
    kvstore:
      store: inmemory
store_gateway:
  sharding_ring:
    instance_addr: 127.0.0.1
    kvstore:
      store: inmemory
    replication_factor: 1
frontend_worker:
  match_max_concurrent: true
ruler:
  ring:
    instance_addr: 127.0.0.1
    kvstore:
      store: inmemory
ruler_storage:
  backend: local
  local:
    directory: %[1]s/rules
alertmanager:
  external_url: http://127.0.0.1/alertmanager
  cluster:
    listen_address: ""
  sharding_ring:
    instance_addr: 127.0.0.1
    kvstore:
      store: inmemory
alertmanager_storage:
  backend: local
  local:
    path: %[1]s/alerts
limits:
  ingestion_rate: 1000000000
  ingestion_burst_size: 1000000000
  max_label_names_per_series: 100
  max_series_per_metric: 0
  max_series_per_user: 0
  max_global_series_per_user: 0
  max_global_series_per_metric: 0
`, dir, httpPort, grpcPort)
}

// startCortex starts Cortex as one process (-target=all) and feeds it: OpenMetrics samples through the remote-write
// protocol, and targets through a Prometheus 3 that scrapes them and remote-writes to Cortex, both under Tenant.
// It returns Cortex's address; queries go to /prometheus with the tenant header.
func startCortex(t testing.TB, opts Options) string {
	t.Helper()
	bin := EngineBinary(t, Cortex, "cortex")
	dir := t.TempDir()
	for _, d := range []string{"rules", "alerts"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "cortex.yaml")
	cortex := startProc(t, "cortex", dir, bin, 2, func(addrs []string) []string {
		_, httpPort, _ := strings.Cut(addrs[0], ":")
		_, grpcPort, _ := strings.Cut(addrs[1], ":")
		if err := os.WriteFile(cfg, []byte(cortexConfig(dir, httpPort, grpcPort)), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{"-config.file=" + cfg, "-target=all"}
	}, "/ready")
	httpAddr := cortex.addr()
	header := http.Header{TenantHeader: {Tenant}}
	if opts.OpenMetrics != "" {
		remoteWrite(t, "http://"+httpAddr+"/api/v1/push", header, opts.OpenMetrics)
	}
	if len(opts.Targets) > 0 {
		rw := fmt.Sprintf("remote_write:\n  - url: %q\n    headers: {%s: %q}\n    queue_config: {batch_send_deadline: 1s}\n",
			"http://"+httpAddr+"/api/v1/push", TenantHeader, Tenant)
		startPrometheus(t, "prometheus-remote-write", opts, nil, rw, "")
	}
	return httpAddr
}

// maxRemoteWrite bounds one remote-write request's uncompressed size, well under Cortex's 100 MB.
const maxRemoteWrite = 4 << 20

// remoteWriteAttempts bounds how often one remote-write request is sent when the server answers 5xx.
const remoteWriteAttempts = 5

// remoteWrite sends OpenMetrics samples (with timestamps) in the Prometheus remote-write protocol (1.0: a snappy
// WriteRequest), series by series in time order, leaving out _created lines as promtool does.
func remoteWrite(t testing.TB, url string, header http.Header, openMetrics string) {
	t.Helper()
	sc, err := exposition.Parse([]byte(openMetrics), exposition.ParseOptions{Format: exposition.FormatOpenMetrics})
	if err != nil {
		t.Fatalf("remote write: %v", err)
	}
	type sample struct {
		v  float64
		ts int64
	}
	type series struct {
		labels  [][2]string
		samples []sample
	}
	byKey := map[string]*series{}
	var keys []string
	for _, f := range sc.Families {
		for _, smp := range f.Samples {
			if smp.Name == f.Name+"_created" {
				continue
			}
			if !smp.HasTimestamp {
				t.Fatalf("remote write: sample %s has no timestamp", smp.Name)
			}
			ls := [][2]string{{"__name__", smp.Name}}
			for _, l := range smp.Labels {
				ls = append(ls, [2]string{l.Name, l.Value})
			}
			sort.Slice(ls, func(i, j int) bool { return ls[i][0] < ls[j][0] })
			var kb strings.Builder
			for _, l := range ls {
				kb.WriteString(l[0] + "\xff" + l[1] + "\xff")
			}
			k := kb.String()
			s := byKey[k]
			if s == nil {
				s = &series{labels: ls}
				byKey[k] = s
				keys = append(keys, k)
			}
			s.samples = append(s.samples, sample{smp.Value, smp.TimestampMs})
		}
	}
	client := &http.Client{Timeout: 60 * time.Second}
	var req []byte
	send := func() {
		if len(req) == 0 {
			return
		}
		body := snappyLiteral(req)
		// A 5xx is retried, as Prometheus's own remote write does, a few times with a growing pause: a loaded
		// machine makes Cortex's internal calls time out now and then. A 4xx is the request's fault and fails.
		for attempt := 1; ; attempt++ {
			r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range header {
				r.Header[k] = v
			}
			r.Header.Set("Content-Type", "application/x-protobuf")
			r.Header.Set("Content-Encoding", "snappy")
			r.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
			resp, err := client.Do(r)
			if err != nil {
				t.Fatalf("remote write: %v", err)
			}
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				break
			}
			if resp.StatusCode/100 != 5 || attempt == remoteWriteAttempts {
				t.Fatalf("remote write (attempt %d): %s: %s", attempt, resp.Status, msg)
			}
			time.Sleep(time.Duration(attempt) * time.Second)
		}
		req = req[:0]
	}
	for _, k := range keys {
		s := byKey[k]
		sort.SliceStable(s.samples, func(i, j int) bool { return s.samples[i].ts < s.samples[j].ts })
		// WriteRequest.timeseries (1) = TimeSeries{labels (1) = Label{name 1, value 2}, samples (2) = Sample{value 1, timestamp 2}}
		var ts []byte
		for _, l := range s.labels {
			var lb []byte
			lb = protowire.AppendTag(lb, 1, protowire.BytesType)
			lb = protowire.AppendString(lb, l[0])
			lb = protowire.AppendTag(lb, 2, protowire.BytesType)
			lb = protowire.AppendString(lb, l[1])
			ts = protowire.AppendTag(ts, 1, protowire.BytesType)
			ts = protowire.AppendBytes(ts, lb)
		}
		for _, smp := range s.samples {
			var sb []byte
			sb = protowire.AppendTag(sb, 1, protowire.Fixed64Type)
			sb = protowire.AppendFixed64(sb, math.Float64bits(smp.v))
			sb = protowire.AppendTag(sb, 2, protowire.VarintType)
			sb = protowire.AppendVarint(sb, uint64(smp.ts)) // #nosec G115 -- a protobuf int64 is its two's complement
			ts = protowire.AppendTag(ts, 2, protowire.BytesType)
			ts = protowire.AppendBytes(ts, sb)
		}
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, ts)
		if len(req) > maxRemoteWrite {
			send()
		}
	}
	send()
}

// snappyLiteral encodes b in the snappy block format as literals only (valid snappy, uncompressed): the length as
// a varint, then literal elements of at most 64 kB.
func snappyLiteral(b []byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(b)))
	for len(b) > 0 {
		n := min(len(b), 1<<16)
		switch {
		case n <= 60:
			out = append(out, byte(n-1)<<2) // #nosec G115 -- n is at most 60 here
		case n <= 1<<8:
			out = append(out, 60<<2, byte(n-1)) // #nosec G115 -- n is at most 256 here
		default:
			out = append(out, 61<<2, byte(n-1), byte((n-1)>>8)) // #nosec G115 -- n is at most 1<<16: two bytes
		}
		out = append(out, b[:n]...)
		b = b[n:]
	}
	return out
}

// StopStore stops the Prometheus behind the i-th sidecar of a Thanos engine (ThanosShards: shard="i"; ThanosHA:
// replica "a" is 0), leaving its sidecar up: the querier still lists the store, whose every Series call now fails,
// as when a Prometheus of a fleet is down.
func (s *Server) StopStore(t testing.TB, i int) {
	t.Helper()
	if i < 0 || i >= len(s.stores) {
		t.Fatalf("%s has %d stores, not a store %d", s.Engine, len(s.stores), i)
	}
	s.stores[i].prometheus.stop()
}

// StoreAddr is the address the querier names the i-th store of a Thanos engine by (its sidecar's gRPC address).
func (s *Server) StoreAddr(t testing.TB, i int) string {
	t.Helper()
	if i < 0 || i >= len(s.stores) {
		t.Fatalf("%s has %d stores, not a store %d", s.Engine, len(s.stores), i)
	}
	return s.stores[i].endpoint
}

// StopSidecar stops the i-th sidecar of a Thanos engine (its Prometheus stays up): the querier loses the store.
func (s *Server) StopSidecar(t testing.TB, i int) {
	t.Helper()
	if i < 0 || i >= len(s.stores) {
		t.Fatalf("%s has %d stores, not a store %d", s.Engine, len(s.stores), i)
	}
	s.stores[i].sidecar.stop()
}

// RunningGauges is OpenMetrics text of vllm:num_requests_running on the given instances (engine "0", model "m";
// the n-th at n+1), a sample every 5 s for a minute from from: enough for a store test to tell which endpoints an
// answer holds.
func RunningGauges(from time.Time, instances ...string) string {
	var b strings.Builder
	b.WriteString("# TYPE vllm:num_requests_running gauge\n")
	for n, inst := range instances {
		for i := 0; i <= 12; i++ {
			fmt.Fprintf(&b, "vllm:num_requests_running{instance=%q,engine=\"0\",model_name=\"m\"} %d %d\n", inst, n+1, from.Add(time.Duration(i)*5*time.Second).Unix())
		}
	}
	b.WriteString("# EOF\n")
	return b.String()
}
