package discovery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// dnsSource resolves A/AAAA records (one target per address, at the source's port) or SRV records (one target per
// record, its target name resolved to addresses through the same resolver, so a test server or a cluster's DNS
// answers both). SRV targets are resolved once, never followed as SRV names again, so records that point at
// themselves cannot loop; CNAME chains are bounded by the resolver.
type dnsSource struct {
	name, kind string
	port       int
	resolver   *net.Resolver
}

// dnsTimeout bounds one discovery round of a DNS source.
const dnsTimeout = 10 * time.Second

func newDNS(s Source) *dnsSource {
	d := &dnsSource{name: s.DNSName, kind: strings.ToUpper(s.RecordType), port: s.Port, resolver: net.DefaultResolver}
	if d.kind == "" {
		d.kind = "A"
	}
	if s.DNSServer != "" {
		server := s.DNSServer
		d.resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, network, server)
		}}
	}
	return d
}

func (d *dnsSource) Discover(ctx context.Context, max int) ([]Target, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
	defer cancel()
	if d.kind != "SRV" {
		ips, err := d.lookup(ctx, d.name)
		if err != nil {
			return nil, false, err
		}
		var out []Target
		for _, ip := range ips {
			if len(out) == max {
				return out, true, nil
			}
			addr := hostPort(ip, d.port)
			out = append(out, Target{Address: addr, Labels: map[string]string{LabelAddress: addr, "__meta_dns_name": d.name}})
		}
		return out, false, nil
	}
	_, srvs, err := d.resolver.LookupSRV(ctx, "", "", d.name)
	if err != nil && len(srvs) == 0 {
		return nil, false, fmt.Errorf("dns SRV %s: %w", d.name, dnsError(err))
	}
	var out []Target
	var failed []string
	seen := map[string]bool{}
	for _, srv := range srvs {
		host := strings.TrimSuffix(srv.Target, ".")
		if host == "" || srv.Port == 0 {
			continue
		}
		ips, err := d.lookup(ctx, host)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", host, err))
			continue
		}
		for _, ip := range ips {
			addr := hostPort(ip, int(srv.Port))
			if seen[addr] {
				continue
			}
			if len(out) == max {
				return out, true, nil
			}
			seen[addr] = true
			out = append(out, Target{Address: addr, Labels: map[string]string{LabelAddress: addr, "__meta_dns_name": d.name,
				"__meta_dns_srv_record_target": host, "__meta_dns_srv_record_port": strconv.Itoa(int(srv.Port))}})
		}
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("dns SRV %s: resolving the records' targets took over %s", d.name, dnsTimeout)
		}
	}
	if len(out) == 0 && len(failed) > 0 {
		return nil, false, fmt.Errorf("dns SRV %s: no record's target resolves (%s)", d.name, strings.Join(failed[:min(len(failed), 3)], "; "))
	}
	return out, false, nil
}

// lookup resolves a name to the source's address family, sorted so rounds compare equal.
func (d *dnsSource) lookup(ctx context.Context, host string) ([]string, error) {
	network := "ip4"
	if d.kind == "AAAA" {
		network = "ip6"
	}
	ips, err := d.resolver.LookupIP(ctx, network, host)
	if err != nil {
		return nil, fmt.Errorf("dns %s %s: %w", d.kind, host, dnsError(err))
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	sort.Strings(out)
	return out, nil
}

// dnsError is a resolver error without the resolver's own address noise.
func dnsError(err error) error {
	var de *net.DNSError
	if errors.As(err, &de) {
		if de.IsNotFound {
			return errors.New("no such name")
		}
		return errors.New(de.Err)
	}
	return err
}

func (*dnsSource) Close() {}
