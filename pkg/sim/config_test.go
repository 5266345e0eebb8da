package sim

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParseArgs: defaults, scenario values, flags overriding the scenario, and env.
func TestParseArgs(t *testing.T) {
	scenario := writeFile(t, "s.json", `{"flavor": "vllm-ascend", "engines": 4, "qps": 7.5,
		"qps_wave_period": "90s", "spec_tokens": 2, "spec_acceptance": [0.7, 0.5], "perf": {"step_base_ms": 9}}`)
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{"defaults", nil, nil, func(t *testing.T, c Config) {
			want := Default()
			want.Addr = ":8000"
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got %+v\nwant %+v", c, want)
			}
		}},
		{"flags", []string{"-flavor", "vllm-v1-0.10", "-engines", "3", "-qps", "12", "-spec-tokens", "2",
			"-spec-acceptance", "0.9,0.5", "-addr", "127.0.0.1:9000", "-speed", "60", "-client-timeout", "0s"}, nil,
			func(t *testing.T, c Config) {
				if c.Flavor != FlavorV1010 || c.Engines != 3 || c.QPS != 12 || c.Speed != 60 || c.Addr != "127.0.0.1:9000" ||
					!reflect.DeepEqual(c.SpecAcceptance, []float64{0.9, 0.5}) || c.ClientTimeout != 0 {
					t.Errorf("flags not applied: %+v", c)
				}
			}},
		{"release", []string{"-vllm-version", "v0.20.1", "-kv-offload-gb", "8"}, nil, func(t *testing.T, c Config) {
			if c.VLLMVersion != "v0.20.1" || c.servedVersion() != "0.20.1" {
				t.Errorf("release not applied: %q serves %q", c.VLLMVersion, c.servedVersion())
			}
		}},
		{"scenario", []string{"-scenario", scenario}, map[string]string{"SERVICE_PROF_CONFIG_PATH": "/x/ms_service_profiler_config.json"},
			func(t *testing.T, c Config) {
				if c.Flavor != FlavorAscend || c.Engines != 4 || c.QPS != 7.5 || time.Duration(c.QPSWavePeriod) != 90*time.Second ||
					c.Perf.StepBaseMs != 9 || c.Perf.PrefillPerTokenMs != DefaultPerf().PrefillPerTokenMs {
					t.Errorf("scenario not applied: %+v", c)
				}
				if c.ProfilerConfig != "/x/ms_service_profiler_config.json" {
					t.Errorf("profiler config %q, want the env path", c.ProfilerConfig)
				}
			}},
		{"flags override the scenario, wherever they are", []string{"-qps", "3", "-scenario", scenario, "-engines", "2"}, nil,
			func(t *testing.T, c Config) {
				if c.QPS != 3 || c.Engines != 2 || c.Flavor != FlavorAscend {
					t.Errorf("got flavor %s engines %d qps %v", c.Flavor, c.Engines, c.QPS)
				}
			}},
		{"dynamo worker listens on 8081", []string{"-flavor", "dynamo-worker"}, nil, func(t *testing.T, c Config) {
			if c.Addr != ":8081" {
				t.Errorf("addr %q", c.Addr)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseArgs(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// TestParseArgsErrors: bad input gives a clear error, never a panic.
func TestParseArgsErrors(t *testing.T) {
	typo := writeFile(t, "typo.json", `{"enignes": 2}`)
	broken := writeFile(t, "broken.json", `{"engines": `)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-flavor", "sglang"}, "unknown flavor"},
		{[]string{"-qps", "-1"}, "qps must be"},
		{[]string{"-flavor", "vllm-v0", "-engines", "2"}, "vllm-v0 has no data parallelism"},
		{[]string{"-pid-label"}, "pid-label needs api-server-processes"},
		{[]string{"-engines", "2", "-api-servers", "2", "-api-server-index", "2"}, "api-server-index"},
		{[]string{"-spec-tokens", "2", "-spec-acceptance", "0.5,0.7"}, "must not increase"},
		{[]string{"-spec-tokens", "2", "-spec-acceptance", "0.5"}, "needs 2 values"},
		{[]string{"-spec-acceptance", "x"}, "not a number"},
		{[]string{"-num-gpu-blocks", "100"}, "num-gpu-blocks must be"},
		{[]string{"-routing", "random"}, "routing must be"},
		{[]string{"-block-size", "3"}, "block-size"},
		{[]string{"-profiler-poll", "5s"}, "profiler-poll"},
		{[]string{"-scenario", typo}, `unknown field "enignes"`},
		{[]string{"-scenario", broken}, "unexpected EOF"},
		{[]string{"-scenario", "/nonexistent/s.json"}, "no such file"},
		{[]string{"-engines", "two"}, "invalid value"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-vllm-version", "0.9"}, `unknown vLLM version "0.9"`},
		{[]string{"-vllm-version", "0.6"}, "vllm-version 0.6 needs flavor vllm-v0"},
		{[]string{"-flavor", "vllm-v0", "-vllm-version", "0.20"}, "needs a V1 engine flavor"},
		{[]string{"-flavor", "dynamo-frontend", "-vllm-version", "0.20"}, "needs a V1 engine flavor"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := ParseArgs(tc.args, noEnv, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := ParseArgs([]string{"-h"}, noEnv, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h gave %v, want flag.ErrHelp", err)
	}
}

// TestShippedScenarios: every example scenario loads, validates and renders a parseable scrape.
func TestShippedScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("scenarios", "*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("want at least 3 example scenarios, found %v (%v)", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			cfg, err := ParseArgs([]string{"-scenario", file}, noEnv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			f := newTestFleet(t, cfg)
			f.SetProfilingEnabled(true)
			f.Advance(5 * time.Minute)
			if fams := parse(t, render(t, f)); len(fams) < 20 {
				t.Fatalf("only %d families", len(fams))
			}
		})
	}
}
