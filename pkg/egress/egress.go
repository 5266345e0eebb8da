// Package egress decides where the plugin's HTTP clients may go: which addresses they may connect to (link-local
// and cloud-metadata addresses are refused unless an Admin allows them) and which redirects they follow (scrapes
// none, API calls only within the configured origin), so that neither a URL nor a redirect can aim the Grafana
// server's credentials at another host.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// MaxRedirects bounds the same-origin redirects an API call follows.
const MaxRedirects = 5

// ErrDenied is wrapped by every refusal of this package.
var ErrDenied = errors.New("refused by the plugin's egress policy")

// deniedPrefixes are link-local ranges, where every cloud's instance-metadata service lives, and the metadata
// addresses outside them. Loopback and private ranges stay allowed: vLLM usually runs there.
var deniedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),     // IPv4 link-local: AWS, GCP, Azure, OpenStack, ECS metadata
	netip.MustParsePrefix("fe80::/10"),          // IPv6 link-local
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS instance metadata over IPv6
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
}

// deniedHosts are metadata services' names, refused before any DNS lookup.
var deniedHosts = map[string]bool{
	"metadata.google.internal": true, "metadata.goog": true, "metadata": true, "instance-data": true,
	"instance-data.ec2.internal": true, "metadata.azure.internal": true,
}

// Policy is one client's egress rules.
type Policy struct {
	// AllowLinkLocal lets an Admin reach link-local and metadata addresses, for on-premises setups that put
	// inference servers there.
	AllowLinkLocal bool
	// FollowRedirects follows same-origin redirects (up to MaxRedirects); false refuses every redirect, as
	// Prometheus does for scrapes.
	FollowRedirects bool
}

// CheckAddr refuses a denied IP address.
func (p Policy) CheckAddr(ip netip.Addr) error {
	if p.AllowLinkLocal {
		return nil
	}
	ip = ip.Unmap()
	for _, pre := range deniedPrefixes {
		if pre.Contains(ip) {
			return fmt.Errorf("%w: %s is a link-local or cloud-metadata address (allowLinkLocalTargets lets an Admin allow it)", ErrDenied, ip)
		}
	}
	return nil
}

// CheckURL refuses a URL whose host is a denied name or address, before anything is sent; names that resolve to a
// denied address are caught again when the connection is made (Control).
func (p Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", redact.URL(raw))
	}
	if p.AllowLinkLocal {
		return nil
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if deniedHosts[host] {
		return fmt.Errorf("%w: %s is a cloud-metadata host (allowLinkLocalTargets lets an Admin allow it)", ErrDenied, host)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.CheckAddr(ip)
	}
	return nil
}

// CheckRedirect is an http.Client CheckRedirect: no Referer ever (it would carry a URL's ?token=), no redirect at
// all unless FollowRedirects, and then only to the origin of the first request, at most MaxRedirects times, so
// the credentials the client adds on every hop never reach another host.
func (p Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	target := redact.URL(req.URL.String())
	if !p.FollowRedirects {
		return fmt.Errorf("%w: the server redirects to %s; configure that URL instead (scrapes do not follow redirects)", ErrDenied, target)
	}
	if len(via) >= MaxRedirects {
		return fmt.Errorf("%w: more than %d redirects, the last to %s", ErrDenied, MaxRedirects, target)
	}
	if origin(req.URL) != origin(via[0].URL) {
		return fmt.Errorf("%w: the server redirects to another origin (%s); the data source's credentials are sent only to %s",
			ErrDenied, target, redact.URL(via[0].URL.Scheme+"://"+via[0].URL.Host))
	}
	return p.CheckURL(req.URL.String())
}

// origin is scheme://host:port with the scheme's default port made explicit and the host case-folded.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// ConfigureClient sets the redirect rule on a client (an httpclient.Options.ConfigureClient hook).
func (p Policy) ConfigureClient(client *http.Client) { client.CheckRedirect = p.CheckRedirect }

// ConfigureTransport makes the transport resolve each host itself and dial only addresses CheckAddr allows (an
// httpclient.Options.ConfigureTransport hook), so a name that resolves to a metadata address is refused too. The
// transport's own dialer (timeouts, keep-alive) makes the connection. A proxy from the environment is what gets
// dialled, and checked, instead of the target.
func (p Policy) ConfigureTransport(t *http.Transport) {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		var last error
		for _, ip := range ips {
			if err := p.CheckAddr(ip); err != nil {
				last = err
				continue
			}
			conn, err := dial(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
			if err == nil {
				return conn, nil
			}
			last = err
		}
		if last == nil {
			last = fmt.Errorf("no address for %s", host)
		}
		return nil, last
	}
}
