// Package discoverytest serves what discovery sources ask, on loopback, for tests: a DNS server (miekg/dns) and a
// Kubernetes API server speaking pod list and watch. Only tests import it, so the plugin's executables carry
// neither.
package discoverytest

import (
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Zone is a loopback DNS server's records, which tests change between discovery rounds.
type Zone struct {
	mu  sync.Mutex
	rrs map[string][]string // "name TYPE" → RR texts
}

// NewZone is an empty zone.
func NewZone() *Zone { return &Zone{rrs: map[string][]string{}} }

// Set makes name's records of type typ (A, AAAA, SRV, CNAME) exactly rrs, written as in a zone file.
func (z *Zone) Set(name, typ string, rrs ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.rrs[dns.Fqdn(name)+" "+typ] = rrs
}

// A is n A records of name with addresses base+1, base+2, … in the last octet (base "10.1.0." gives 10.1.0.1…).
func A(name, base string, n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = fmt.Sprintf("%s 5 IN A %s%d", dns.Fqdn(name), base, i+1)
	}
	return out
}

// ServeDNS answers from the zone: the asked type, else a CNAME; NXDOMAIN when the name has neither. Answers too
// long for UDP are truncated with TC set, so the resolver asks again over TCP as it would a real server.
func (z *Zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
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
			m.Rcode = dns.RcodeServerFailure
			break
		}
		m.Answer = append(m.Answer, rr)
	}
	if len(m.Answer) == 0 && m.Rcode == dns.RcodeSuccess {
		m.Rcode = dns.RcodeNameError
	}
	if w.LocalAddr().Network() == "udp" {
		size := dns.MinMsgSize
		if o := req.IsEdns0(); o != nil {
			size = int(o.UDPSize())
		}
		m.Truncate(size)
	}
	_ = w.WriteMsg(m)
}

// Serve serves the zone on a loopback port over UDP and TCP until the test ends, and returns host:port.
func (z *Zone) Serve(t testing.TB) string {
	t.Helper()
	// UDP and TCP need the same port; another process may hold the TCP side of the port UDP got, so try a few.
	var pc net.PacketConn
	var ln net.Listener
	for attempt := 0; ; attempt++ {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		_ = pc.Close()
		if attempt == 20 {
			t.Fatalf("no loopback port free for both UDP and TCP: %v", err)
		}
	}
	udp, tcp := &dns.Server{PacketConn: pc, Handler: z}, &dns.Server{Listener: ln, Handler: z}
	go func() { _ = udp.ActivateAndServe() }()
	go func() { _ = tcp.ActivateAndServe() }()
	t.Cleanup(func() { _ = udp.Shutdown(); _ = tcp.Shutdown() })
	return pc.LocalAddr().String()
}
