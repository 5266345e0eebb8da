package discovery

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/discovery/discoverytest"
)

// bigZone is n A records of big.example over several /24s.
func bigZone(n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf("big.example. 5 IN A 10.1.%d.%d", i/250, i%250+1)
	}
	return out
}

func TestDNSARecordsFollowTheFleet(t *testing.T) {
	z := discoverytest.NewZone()
	server := z.Serve(t)
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: "vllm.llm.svc.cluster.local", Port: 8000, DNSServer: server}}, Options{MaxEndpoints: 100})
	defer r.Close()
	for _, n := range []int{4, 16, 2} {
		z.Set("vllm.llm.svc.cluster.local", "A", discoverytest.A("vllm.llm.svc.cluster.local", "10.1.0.", n)...)
		res := r.Refresh(context.Background())
		if len(res.Endpoints) != n || res.Reports[0].Error != "" {
			t.Fatalf("%d records: %d endpoints, %+v", n, len(res.Endpoints), res.Reports)
		}
		if !strings.Contains(","+names(res.Endpoints)+",", ",10.1.0.1:8000,") || !strings.HasSuffix(res.Endpoints[0].URL, ":8000/metrics") {
			t.Errorf("endpoints %+v", res.Endpoints)
		}
	}
	z.Set("vllm.llm.svc.cluster.local", "A")
	res := r.Refresh(context.Background())
	if !strings.Contains(res.Reports[0].Error, "no such name") || !res.Reports[0].Stale || len(res.Endpoints) != 2 {
		t.Errorf("a vanished name: %+v, %d endpoints", res.Reports[0], len(res.Endpoints))
	}
}

func TestDNSAAAA(t *testing.T) {
	z := discoverytest.NewZone()
	z.Set("v6.example", "AAAA", "v6.example. 5 IN AAAA fd00::7")
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: "v6.example", RecordType: "AAAA", Port: 8000, DNSServer: z.Serve(t)}}, Options{MaxEndpoints: 10})
	defer r.Close()
	res := r.Refresh(context.Background())
	if len(res.Endpoints) != 1 || res.Endpoints[0].URL != "http://[fd00::7]:8000/metrics" {
		t.Fatalf("%+v", res)
	}
}

func TestDNSSRVRecords(t *testing.T) {
	z := discoverytest.NewZone()
	const srv = "_metrics._tcp.vllm.llm.svc.cluster.local"
	z.Set(srv, "SRV",
		srv+". 5 IN SRV 0 50 8000 pod-a.vllm.",
		srv+". 5 IN SRV 0 50 8001 pod-b.vllm.",
		// A record pointing at the SRV name itself and one into a CNAME loop: neither resolves, neither loops.
		srv+". 5 IN SRV 0 50 8002 "+srv+".",
		srv+". 5 IN SRV 0 50 8003 loop-a.vllm.")
	z.Set("pod-a.vllm", "A", "pod-a.vllm. 5 IN A 10.2.0.1")
	z.Set("pod-b.vllm", "A", "pod-b.vllm. 5 IN A 10.2.0.2")
	z.Set("loop-a.vllm", "CNAME", "loop-a.vllm. 5 IN CNAME loop-b.vllm.")
	z.Set("loop-b.vllm", "CNAME", "loop-b.vllm. 5 IN CNAME loop-a.vllm.")
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: srv, RecordType: "SRV", DNSServer: z.Serve(t),
		Relabel: Relabel{NameTemplate: "{__meta_dns_srv_record_target}"}}}, Options{MaxEndpoints: 10})
	defer r.Close()
	res := r.Refresh(context.Background())
	if got := names(res.Endpoints); got != "pod-a.vllm,pod-b.vllm" {
		t.Fatalf("endpoints %s, %+v", got, res.Reports)
	}
	if res.Endpoints[1].URL != "http://10.2.0.2:8001/metrics" {
		t.Errorf("%+v", res.Endpoints[1])
	}

	// Only loops: a clear error, not a hang.
	z.Set(srv, "SRV", srv+". 5 IN SRV 0 50 8003 loop-a.vllm.", srv+". 5 IN SRV 0 50 8002 "+srv+".")
	res = r.Refresh(context.Background())
	if e := res.Reports[0].Error; !strings.Contains(e, "no record's target resolves") {
		t.Errorf("loops: %q", e)
	}
}

func TestDNSCutsAtMaxEndpoints(t *testing.T) {
	z := discoverytest.NewZone()
	z.Set("big.example", "A", bigZone(300)...)
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: "big.example", Port: 8000, DNSServer: z.Serve(t)}}, Options{MaxEndpoints: 100})
	defer r.Close()
	res := r.Refresh(context.Background())
	if len(res.Endpoints) != 100 || !strings.Contains(strings.Join(res.Notices, "\n"), "found more than 100 targets") {
		t.Fatalf("%d endpoints, notices %v", len(res.Endpoints), res.Notices)
	}
}
