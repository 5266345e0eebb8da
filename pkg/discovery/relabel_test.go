package discovery

import (
	"strings"
	"testing"
)

func TestRelabelNamesKeepsAndDrops(t *testing.T) {
	pod := map[string]string{LabelAddress: "10.0.0.7:8000", "__meta_kubernetes_namespace": "llm", "__meta_kubernetes_pod_name": "decode-0",
		"llm-d.ai/role": "decode", "app": "vllm"}
	def, _ := parseTemplate("{" + LabelAddress + "}")
	for _, tc := range []struct {
		name     string
		r        Relabel
		wantName string
		keep     bool
	}{
		{"default is the address", Relabel{}, "10.0.0.7:8000", true},
		{"template", Relabel{NameTemplate: "{__meta_kubernetes_namespace}/{__meta_kubernetes_pod_name}"}, "llm/decode-0", true},
		{"literal and label", Relabel{NameTemplate: "vllm-{llm-d.ai/role}"}, "vllm-decode", true},
		{"every label missing falls back to the address", Relabel{NameTemplate: "{nope}"}, "10.0.0.7:8000", true},
		{"keep matches whole value", Relabel{Keep: []Match{{"app", "vllm"}}}, "10.0.0.7:8000", true},
		{"keep is anchored", Relabel{Keep: []Match{{"app", "vll"}}}, "", false},
		{"keep on a missing label matches empty", Relabel{Keep: []Match{{"tier", ""}}}, "10.0.0.7:8000", true},
		{"drop any", Relabel{Drop: []Match{{"llm-d.ai/role", "prefill|decode"}}}, "", false},
		{"drop none", Relabel{Drop: []Match{{"llm-d.ai/role", "prefill"}}}, "10.0.0.7:8000", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.r.compile()
			if err != nil {
				t.Fatal(err)
			}
			if got := r.keeps(pod); got != tc.keep {
				t.Fatalf("keeps = %v, want %v", got, tc.keep)
			}
			if tc.keep {
				if got := r.nameOf(pod, def); got != tc.wantName {
					t.Errorf("name = %q, want %q", got, tc.wantName)
				}
			}
		})
	}
}

func TestRelabelRefusesBadRules(t *testing.T) {
	for _, tc := range []struct {
		r    Relabel
		want string
	}{
		{Relabel{NameTemplate: "{pod"}, "without its }"},
		{Relabel{NameTemplate: "pod}"}, "without its {"},
		{Relabel{NameTemplate: "{}"}, "not a label reference"},
		{Relabel{Keep: []Match{{"app", "("}}}, "keep rule 1"},
		{Relabel{Drop: []Match{{"", "x"}}}, "drop rule 1 needs a label"},
		{Relabel{Keep: make([]Match, maxRules+1)}, "at most"},
		{Relabel{RoleLabel: strings.Repeat("r", MaxValueBytes+1)}, "at most"},
	} {
		if _, err := tc.r.compile(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.r, err, tc.want)
		}
	}
}

func TestSourceValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Source
		want string // "" is valid
	}{
		{Source{Type: TypeDNS, DNSName: "vllm.llm.svc", Port: 8000}, ""},
		{Source{Type: TypeDNS, DNSName: "_metrics._tcp.vllm", RecordType: "srv"}, ""},
		{Source{Type: TypeDNS, DNSName: "vllm"}, "need a port"},
		{Source{Type: TypeDNS, DNSName: "vllm", RecordType: "MX", Port: 1}, "not A, AAAA or SRV"},
		{Source{Type: TypeKubernetes, Namespaces: []string{"llm"}, PortName: "metrics"}, ""},
		{Source{Type: TypeKubernetes}, "port number or a container port name"},
		{Source{Type: TypeKubernetes, Port: 80, Namespaces: []string{"a/b"}}, "not a namespace name"},
		{Source{Type: TypeHTTP, URL: "http://consul-sd:8080/targets"}, ""},
		{Source{Type: TypeHTTP, URL: "ftp://user:secret@x"}, "not an absolute http(s) URL"},
		{Source{Type: TypeFile, Path: "/etc/targets.yaml"}, ""},
		{Source{Type: TypeFile}, "needs path"},
		{Source{Type: "consul"}, "not one of"},
		{Source{Type: TypeFile, Path: "x", Scheme: "ftp"}, "not http or https"},
		{Source{Type: TypeFile, Path: "x", MetricsPath: "metrics"}, "must start with /"},
		{Source{Type: TypeFile, Path: "x", Port: 70000}, "not a TCP port"},
	} {
		err := tc.s.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.s, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one containing %q", tc.s, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error quotes a secret: %v", err)
		}
	}
}
