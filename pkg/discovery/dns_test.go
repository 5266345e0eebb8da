package discovery

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// zone is a loopback DNS server's records, changed by tests between rounds.
type zone struct {
	mu  sync.Mutex
	rrs map[string][]string // "name TYPE" → RR texts
}

func (z *zone) set(name, typ string, rrs ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.rrs[dns.Fqdn(name)+" "+typ] = rrs
}

func (z *zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	q := req.Question[0]
	z.mu.Lock()
	rrs, ok := z.rrs[q.Name+" "+dns.TypeToString[q.Qtype]]
	if !ok {
		rrs = z.rrs[q.Name+" CNAME"]
	}
	z.mu.Unlock()
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			panic(err)
		}
		m.Answer = append(m.Answer, rr)
	}
	if len(m.Answer) == 0 {
		m.Rcode = dns.RcodeNameError
	}
	if w.LocalAddr().Network() == "udp" {
		// A real server sets TC when the answer does not fit; the resolver then asks again over TCP.
		size := dns.MinMsgSize
		if o := req.IsEdns0(); o != nil {
			size = int(o.UDPSize())
		}
		m.Truncate(size)
	}
	_ = w.WriteMsg(m)
}

// startDNS serves z on a loopback UDP and TCP port and returns host:port.
func startDNS(t *testing.T, z *zone) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	udp, tcp := &dns.Server{PacketConn: pc, Handler: z}, &dns.Server{Listener: ln, Handler: z}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return pc.LocalAddr().String()
}

func newZone() *zone { return &zone{rrs: map[string][]string{}} }

// aRecords are n A records of name, 10.1.0.1 onwards.
func aRecords(name string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s 5 IN A 10.1.%d.%d", dns.Fqdn(name), i/250, i%250+1))
	}
	return out
}

func TestDNSARecordsFollowTheFleet(t *testing.T) {
	z := newZone()
	server := startDNS(t, z)
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: "vllm.llm.svc.cluster.local", Port: 8000, DNSServer: server}}, Options{MaxEndpoints: 100})
	defer r.Close()
	for _, n := range []int{4, 16, 2} {
		z.set("vllm.llm.svc.cluster.local", "A", aRecords("vllm.llm.svc.cluster.local", n)...)
		res := r.Refresh(context.Background())
		if len(res.Endpoints) != n || res.Reports[0].Error != "" {
			t.Fatalf("%d records: %d endpoints, %+v", n, len(res.Endpoints), res.Reports)
		}
		if !strings.Contains(","+names(res.Endpoints)+",", ",10.1.0.1:8000,") || !strings.HasSuffix(res.Endpoints[0].URL, ":8000/metrics") {
			t.Errorf("endpoints %+v", res.Endpoints)
		}
	}
	z.set("vllm.llm.svc.cluster.local", "A")
	res := r.Refresh(context.Background())
	if !strings.Contains(res.Reports[0].Error, "no such name") || !res.Reports[0].Stale || len(res.Endpoints) != 2 {
		t.Errorf("a vanished name: %+v, %d endpoints", res.Reports[0], len(res.Endpoints))
	}
}

func TestDNSAAAA(t *testing.T) {
	z := newZone()
	z.set("v6.example", "AAAA", "v6.example. 5 IN AAAA fd00::7")
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: "v6.example", RecordType: "AAAA", Port: 8000, DNSServer: startDNS(t, z)}}, Options{MaxEndpoints: 10})
	defer r.Close()
	res := r.Refresh(context.Background())
	if len(res.Endpoints) != 1 || res.Endpoints[0].URL != "http://[fd00::7]:8000/metrics" {
		t.Fatalf("%+v", res)
	}
}

func TestDNSSRVRecords(t *testing.T) {
	z := newZone()
	const srv = "_metrics._tcp.vllm.llm.svc.cluster.local"
	z.set(srv, "SRV",
		srv+". 5 IN SRV 0 50 8000 pod-a.vllm.",
		srv+". 5 IN SRV 0 50 8001 pod-b.vllm.",
		// A record pointing at the SRV name itself and one into a CNAME loop: neither resolves, neither loops.
		srv+". 5 IN SRV 0 50 8002 "+srv+".",
		srv+". 5 IN SRV 0 50 8003 loop-a.vllm.")
	z.set("pod-a.vllm", "A", "pod-a.vllm. 5 IN A 10.2.0.1")
	z.set("pod-b.vllm", "A", "pod-b.vllm. 5 IN A 10.2.0.2")
	z.set("loop-a.vllm", "CNAME", "loop-a.vllm. 5 IN CNAME loop-b.vllm.")
	z.set("loop-b.vllm", "CNAME", "loop-b.vllm. 5 IN CNAME loop-a.vllm.")
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: srv, RecordType: "SRV", DNSServer: startDNS(t, z),
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
	z.set(srv, "SRV", srv+". 5 IN SRV 0 50 8003 loop-a.vllm.", srv+". 5 IN SRV 0 50 8002 "+srv+".")
	res = r.Refresh(context.Background())
	if e := res.Reports[0].Error; !strings.Contains(e, "no record's target resolves") {
		t.Errorf("loops: %q", e)
	}
}

func TestDNSCutsAtMaxEndpoints(t *testing.T) {
	z := newZone()
	z.set("big.example", "A", aRecords("big.example", 300)...)
	r := NewRunner([]Source{{Type: TypeDNS, DNSName: "big.example", Port: 8000, DNSServer: startDNS(t, z)}}, Options{MaxEndpoints: 100})
	defer r.Close()
	res := r.Refresh(context.Background())
	if len(res.Endpoints) != 100 || !strings.Contains(strings.Join(res.Notices, "\n"), "found more than 100 targets") {
		t.Fatalf("%d endpoints, notices %v", len(res.Endpoints), res.Notices)
	}
}
