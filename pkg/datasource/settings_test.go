package datasource

import (
	"context"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// TestSettingsRefuseAmbiguousEndpoints: status and history are keyed by display name, so two endpoints that share
// a name — or the same target listed under two names — used to make one endpoint's series vanish.
func TestSettingsRefuseAmbiguousEndpoints(t *testing.T) {
	cases := []struct {
		name, endpoints, err string
	}{
		{"same name", `[{"url":"http://a:8000/metrics","name":"gpu"},{"url":"http://b:8000/metrics","name":"gpu"}]`,
			`endpoint 2: the name "gpu" is also endpoint 1's`},
		{"same target under two names", `[{"url":"http://a:8000/metrics","name":"x"},{"url":"http://a:8000/metrics","name":"y"}]`,
			"endpoint 2: http://a:8000/metrics is listed twice"},
		{"same target spelled differently", `[{"url":"http://A:80/metrics/","name":"x"},{"url":"http://a/metrics","name":"y"}]`,
			"endpoint 2: http://a/metrics is endpoint 1's target too"},
		{"same target with other query", `[{"url":"http://a/metrics?x=1"},{"url":"http://a/metrics?x=2","name":"y"}]`,
			"is endpoint 1's target too"},
		{"name is another endpoint's host:port", `[{"url":"http://a:8000/metrics","name":"b:9000"},{"url":"http://b:9000/metrics"}]`,
			`endpoint 2: the name "b:9000" is also endpoint 1's`},
		{"name is another named endpoint's host:port", `[{"url":"http://a:8000/metrics","name":"b:9000"},{"url":"http://b:9000/metrics","name":"bee"}]`,
			`endpoint 1: the name "b:9000" is endpoint 2's host:port`},
		{"unnamed endpoints on one host", `[{"url":"http://a:8000/metrics"},{"url":"http://a:8000/other"}]`,
			`endpoint 2: the name "a:8000" is also endpoint 1's`},
		{"distinct", `[{"url":"http://a:8000/metrics"},{"url":"http://a:8001/metrics"},{"url":"http://b:8000/metrics","name":"b"}]`, ""},
		{"distinct paths, named", `[{"url":"http://a:8000/metrics","name":"x"},{"url":"http://a:8000/other","name":"y"}]`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSettings(backend.DataSourceInstanceSettings{JSONData: []byte(`{"endpoints":` + tc.endpoints + `}`)})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestSettingsRanges: maxBodyMB or maxMemoryMB of 8796093022208 overflowed << 20 to a negative "no cap".
func TestSettingsRanges(t *testing.T) {
	ep := `"endpoints":[{"url":"http://a/metrics"}]`
	cases := []struct {
		name, json, err string
	}{
		{"memory overflow", `{` + ep + `,"maxMemoryMB":8796093022208}`, "maxMemoryMB 8796093022208 is above the 65536 MB maximum"},
		{"body overflow", `{` + ep + `,"maxBodyMB":8796093022208}`, "maxBodyMB 8796093022208 is above the 1024 MB maximum"},
		{"negative body", `{` + ep + `,"maxBodyMB":-1}`, "maxBodyMB -1 is negative"},
		{"samples", `{` + ep + `,"maxSamples":100000000000}`, "maxSamples 100000000000 is above the 10000000 maximum"},
		{"interval", `{` + ep + `,"scrapeInterval":"48h"}`, "scrape interval 48h0m0s is above the 1h0m0s maximum"},
		{"retention", `{` + ep + `,"retention":"10000h"}`, "retention 10000h0m0s is above the 744h0m0s maximum"},
		{"duration overflow", `{` + ep + `,"retention":1e300}`, "1e+300 seconds is out of range"},
		{"not a number", `{` + ep + `,"retention":"NaN"}`, "not a duration"},
		{"too many endpoints", `{"endpoints":[` + strings.Repeat(`{"url":"http://a/metrics"},`, MaxEndpoints) + `{"url":"http://b/metrics"}]}`, "at most 1000 endpoints"},
		{"URL too long", `{"endpoints":[{"url":"http://a/` + strings.Repeat("x", 9000) + `"}]}`, "at most 8192 bytes"},
		{"upper bounds accepted", `{` + ep + `,"maxMemoryMB":65536,"maxBodyMB":1024,"maxSamples":10000000,"scrapeInterval":"1h","retention":"744h"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, err := LoadSettings(backend.DataSourceInstanceSettings{JSONData: []byte(tc.json)})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if st.MaxMemoryBytes() <= 0 || st.MaxBodyBytes() <= 0 {
					t.Fatalf("byte limits %d %d", st.MaxMemoryBytes(), st.MaxBodyBytes())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if len(err.Error()) > 2000 {
				t.Fatalf("error is %d bytes", len(err.Error()))
			}
		})
	}
}

// TestSettingsPeaks: MFU queries divide by the named preset's peaks, by custom peaks where set, by the default
// preset where nothing is; an unknown preset or a peak out of range is refused.
func TestSettingsPeaks(t *testing.T) {
	const eps = `"endpoints":[{"url":"http://127.0.0.1:8000/metrics"}]`
	for _, tc := range []struct {
		json         string
		tflops, tbps float64
		err          string
	}{
		{`{` + eps + `}`, 989, 3.35, ""},
		{`{` + eps + `,"accelerator":"a100-sxm"}`, 312, 2.039, ""},
		{`{` + eps + `,"accelerator":"a100-sxm","peakTflops":400}`, 400, 2.039, ""},
		{`{` + eps + `,"accelerator":"tpu-v9"}`, 0, 0, "accelerator \"tpu-v9\" is not a known preset"},
		{`{` + eps + `,"peakMemoryTBps":-1}`, 0, 0, "peakMemoryTBps -1 is outside"},
		{`{` + eps + `,"peakTflops":1e9}`, 0, 0, "peakTflops 1e+09 is outside"},
		{`{` + eps + `,"peakTflops":5e-324}`, 0, 0, "peakTflops 5e-324 is outside"},
		{`{` + eps + `,"peakMemoryTBps":5e-324}`, 0, 0, "peakMemoryTBps 5e-324 is outside"},
		{`{` + eps + `,"peakTflops":0.0001}`, 0, 0, "peakTflops 0.0001 is outside"},
		{`{` + eps + `,"peakTflops":0.001}`, 0.001, 3.35, ""},
	} {
		st, err := LoadSettings(backend.DataSourceInstanceSettings{JSONData: []byte(tc.json)})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.json, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if tflops, tbps := st.Peaks(); tflops != tc.tflops || tbps != tc.tbps {
			t.Errorf("%s: peaks %v TFLOP/s, %v TB/s, want %v and %v", tc.json, tflops, tbps, tc.tflops, tc.tbps)
		}
	}
}

// TestIncrementalQuerying: Prometheus mode keeps range queries' final steps unless turned off, never while the
// user's OAuth identity is forwarded (answers would then depend on who asks), and refuses an overlap window outside
// its bounds.
func TestIncrementalQuerying(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		cached     bool
		err        string
	}{
		{"default", `{"httpMethod":"POST"}`, true, ""},
		{"on, its own window", `{"incrementalQuerying":true,"incrementalQueryOverlapWindow":"2m"}`, true, ""},
		{"off", `{"incrementalQuerying":false}`, false, ""},
		{"OAuth forwarded", `{"oauthPassThru":true}`, false, ""},
		{"window too short", `{"incrementalQueryOverlapWindow":"10s"}`, false, "incrementalQueryOverlapWindow 10s is outside 1m–24h"},
		{"window too long", `{"incrementalQueryOverlapWindow":"48h"}`, false, "incrementalQueryOverlapWindow 48h0m0s is outside 1m–24h"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := `{"mode":"prometheus",` + strings.TrimPrefix(tc.json, "{")
			s := backend.DataSourceInstanceSettings{URL: "http://127.0.0.1:9090", JSONData: []byte(js)}
			st, err := LoadSettings(s)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPrometheus(context.Background(), s, st, secretsOf(s, st))
			if err != nil {
				t.Fatal(err)
			}
			defer p.close()
			if got := p.client.Results != nil; got != tc.cached {
				t.Errorf("results cache %t, want %t", got, tc.cached)
			}
		})
	}
}
