package profilerconfig

import (
	"errors"
	"testing"
)

func TestSetKeyKeepsEverythingElse(t *testing.T) {
	tests := []struct {
		name, doc, want string
		on              bool
	}{
		{"replace int keeps order and spacing",
			"{\n  \"enable\": 1,\n  \"metric_enable\": 0,\n  \"prof_dir\": \"/x/\"\n}\n",
			"{\n  \"enable\": 1,\n  \"metric_enable\": 1,\n  \"prof_dir\": \"/x/\"\n}\n", true},
		{"bool stays bool", `{"metric_enable":true,"enable":false}`, `{"metric_enable":false,"enable":false}`, false},
		{"absent, multi-line: appended with the last member's indent",
			"{\n\t\"enable\": 0,\n\t\"timelimit\": 1e3\n}", "{\n\t\"enable\": 0,\n\t\"timelimit\": 1e3,\n\t\"metric_enable\": 1\n}", true},
		{"absent, one line", `{"enable": 0, "x": [1, {"metric_enable": 0}]}`, `{"enable": 0, "x": [1, {"metric_enable": 0}], "metric_enable": 1}`, true},
		{"empty object", `{ }`, `{ "metric_enable": 0}`, false},
		{"raw values untouched", `{"a":1.50,"b":"\u00e9\/","metric_enable" : 0 ,"c":12345678901234567890}`,
			`{"a":1.50,"b":"\u00e9\/","metric_enable" : 1 ,"c":12345678901234567890}`, true},
		{"nested key not touched, top-level one is", `{"n":{"metric_enable":0},"metric_enable":0}`, `{"n":{"metric_enable":0},"metric_enable":1}`, true},
		{"repeated key: every occurrence", `{"metric_enable":0,"metric_enable":0}`, `{"metric_enable":1,"metric_enable":1}`, true},
		{"escaped key name", `{"metric\u005fenable":0}`, `{"metric\u005fenable":1}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := setKey([]byte(tt.doc), "metric_enable", func(old []byte) []byte { return switchLiteral(old, tt.on) })
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSetKeyRefusesMalformed(t *testing.T) {
	for _, doc := range []string{"", "null", "[]", `"x"`, "{", `{"a":1}}`, `{"a":1} {"b":2}`, `{"a":01}`, "\xef\xbb\xbf{}", `{"a":1,}`} {
		if _, err := setKey([]byte(doc), "metric_enable", func([]byte) []byte { return []byte("1") }); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err = %v, want ErrMalformed", doc, err)
		}
	}
}

func TestParseState(t *testing.T) {
	tests := []struct {
		doc            string
		metric, enable bool
		problem        bool
	}{
		{`{}`, false, false, false},
		{`{"enable":1}`, false, true, false},
		{`{"metric_enable":1,"enable":0}`, true, false, false},
		{`{"metric_enable":true}`, true, false, false},
		{`{"metric_enable":1.0}`, true, false, false},
		{`{"metric_enable":2}`, false, false, true},
		{`{"metric_enable":"1"}`, false, false, true},
		{`{"metric_enable":0,"metric_enable":1}`, true, false, false},
	}
	for _, tt := range tests {
		s, err := parseState([]byte(tt.doc))
		if err != nil {
			t.Fatalf("%s: %v", tt.doc, err)
		}
		if s.MetricEnable != tt.metric || s.Enable != tt.enable || (s.Problem != "") != tt.problem || !s.Exists {
			t.Errorf("%s: got %+v", tt.doc, s)
		}
	}
}
