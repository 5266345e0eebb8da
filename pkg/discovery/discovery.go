// Package discovery finds direct mode's endpoints while the fleet changes: DNS (A/AAAA, SRV), Kubernetes pods or
// EndpointSlices, Prometheus http_sd and file_sd sources, each with a few relabel rules (name template, keep/drop,
// role and model from a label), merged by a Runner that keeps the result unique and within the endpoint limit.
package discovery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Type names a discovery source's kind, with Prometheus's words.
type Type string

// Source kinds.
const (
	TypeDNS        Type = "dns"
	TypeKubernetes Type = "kubernetes"
	TypeHTTP       Type = "http"
	TypeFile       Type = "file"
)

// Types lists the source kinds in the order the config editor offers them.
var Types = []Type{TypeDNS, TypeKubernetes, TypeHTTP, TypeFile}

// Limits on what a source may answer; one answer over them fails that source's round with a clear error and the
// source keeps its previous targets.
const (
	// MaxBodyBytes bounds an http_sd answer and a file_sd file (100 000 targets with a few labels fit).
	MaxBodyBytes = 16 << 20
	// MaxKubernetesPageBytes bounds one page of a pod or EndpointSlice list (asked MaxKubernetesPage at a time).
	MaxKubernetesPageBytes = 32 << 20
	// MaxKubernetesPage is how many pods one list request asks for (EndpointSlices, larger, a tenth of it).
	MaxKubernetesPage = 500
	// MaxWatchEventBytes bounds one watch event (one pod or slice; real pods are a few KB, a full slice ~100 KB).
	MaxWatchEventBytes = 2 << 20
	// MaxSources bounds the sources of one data source.
	MaxSources = 16
	// MaxLabels bounds the labels one target carries.
	MaxLabels = 256
	// MaxValueBytes bounds a label's name or value, a template, a regex and the other strings of a source.
	MaxValueBytes = 1024
)

// Interval bounds and default: how often every source is asked again.
const (
	DefaultInterval = 30 * time.Second
	MinInterval     = time.Second
	MaxInterval     = time.Hour
)

// Target is one address a source found, with the labels relabel rules read.
type Target struct {
	// Address is host:port.
	Address string
	Labels  map[string]string
}

// Label names every target carries.
const (
	LabelAddress = "__address__"
	// LabelSource is the source's name ("dns #1" unless named).
	LabelSource = "__meta_source"
)

// Match is one keep or drop rule: the label's value matches the regex, anchored at both ends as in Prometheus.
type Match struct {
	Label string `json:"label"`
	Regex string `json:"regex"`
}

// Source is one discovery source as the data source settings hold it.
type Source struct {
	Type Type `json:"type"`
	// Name identifies the source in notices, health and the endpoints resource; "<type> #<n>" when empty.
	Name string `json:"name,omitempty"`

	// DNSName is the name resolved (dns); RecordType is A, AAAA or SRV (default A).
	DNSName    string `json:"dnsName,omitempty"`
	RecordType string `json:"recordType,omitempty"`
	// DNSServer is host:port of the DNS server to ask instead of the system's resolver.
	DNSServer string `json:"dnsServer,omitempty"`
	// Port is the metrics port (dns A/AAAA; kubernetes when PortName is empty).
	Port int `json:"port,omitempty"`

	// KubernetesRole is what a kubernetes source follows: pod (the default) or endpointslice.
	KubernetesRole string `json:"kubernetesRole,omitempty"`
	// Namespaces and LabelSelector choose the pods or EndpointSlices (kubernetes); PortName is a container port's
	// name (pod) or a port's name in the slice (endpointslice).
	Namespaces    []string `json:"namespaces,omitempty"`
	LabelSelector string   `json:"labelSelector,omitempty"`
	PortName      string   `json:"portName,omitempty"`
	// Kubeconfig is a kubeconfig file's path; empty uses the pod's service account (in-cluster).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// APIServer replaces the API server URL of the kubeconfig or the in-cluster environment.
	APIServer string `json:"apiServer,omitempty"`

	// URL is the http_sd URL (http).
	URL string `json:"url,omitempty"`
	// Path is the file_sd file (file), JSON or YAML.
	Path string `json:"path,omitempty"`

	// Scheme (http or https, default http) and MetricsPath (default /metrics) make a target's URL.
	Scheme      string `json:"scheme,omitempty"`
	MetricsPath string `json:"metricsPath,omitempty"`
	Relabel
}

// DisplayName is the source's name, or "<type> #<n>" for the n-th source (1-based).
func (s Source) DisplayName(n int) string {
	if s.Name != "" {
		return s.Name
	}
	return fmt.Sprintf("%s #%d", s.Type, n)
}

// Validate reports what is wrong with the source, quoting no secret (an http_sd URL is shown without credentials).
func (s Source) Validate() error {
	var errs []error
	long := func(field, v string) {
		if len(v) > MaxValueBytes {
			errs = append(errs, fmt.Errorf("%s is longer than %d bytes", field, MaxValueBytes))
		}
	}
	for f, v := range map[string]string{"name": s.Name, "dnsName": s.DNSName, "dnsServer": s.DNSServer, "labelSelector": s.LabelSelector,
		"portName": s.PortName, "kubeconfig": s.Kubeconfig, "apiServer": s.APIServer, "url": s.URL, "path": s.Path, "metricsPath": s.MetricsPath} {
		long(f, v)
	}
	if s.Port < 0 || s.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d is not a TCP port", s.Port))
	}
	switch s.Type {
	case TypeDNS:
		if s.DNSName == "" {
			errs = append(errs, errors.New("dns needs dnsName"))
		}
		switch strings.ToUpper(s.RecordType) {
		case "", "A", "AAAA":
			if s.Port == 0 {
				errs = append(errs, errors.New("dns A/AAAA records need a port"))
			}
		case "SRV":
		default:
			errs = append(errs, fmt.Errorf("recordType %.16q is not A, AAAA or SRV", s.RecordType))
		}
	case TypeKubernetes:
		if s.Port == 0 && s.PortName == "" {
			errs = append(errs, errors.New("kubernetes needs a port number or a container port name"))
		}
		if _, ok := kubeResources[s.kubernetesRole()]; !ok {
			errs = append(errs, fmt.Errorf("kubernetesRole %.32q is not pod or endpointslice", s.KubernetesRole))
		}
		if len(s.Namespaces) > MaxSources {
			errs = append(errs, fmt.Errorf("%d namespaces: at most %d", len(s.Namespaces), MaxSources))
		}
		for _, ns := range s.Namespaces {
			long("namespace", ns)
			if ns == "" || strings.ContainsAny(ns, "/?#") {
				errs = append(errs, fmt.Errorf("namespace %.64q is not a namespace name", ns))
			}
		}
		if s.APIServer != "" {
			if err := checkHTTPURL(s.APIServer); err != nil {
				errs = append(errs, fmt.Errorf("apiServer: %w", err))
			}
		}
	case TypeHTTP:
		if err := checkHTTPURL(s.URL); err != nil {
			errs = append(errs, fmt.Errorf("url: %w", err))
		}
	case TypeFile:
		if s.Path == "" {
			errs = append(errs, errors.New("file needs path"))
		}
	default:
		errs = append(errs, fmt.Errorf("type %.16q is not one of dns, kubernetes, http, file", s.Type))
	}
	if s.Scheme != "" && s.Scheme != "http" && s.Scheme != "https" {
		errs = append(errs, fmt.Errorf("scheme %.16q is not http or https", s.Scheme))
	}
	if s.MetricsPath != "" && !strings.HasPrefix(s.MetricsPath, "/") {
		errs = append(errs, fmt.Errorf("metricsPath %.64q must start with /", s.MetricsPath))
	}
	if _, err := s.Relabel.compile(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// targetURL is the metrics URL of address under the source's scheme and path.
func (s Source) targetURL(address string) string {
	scheme, path := s.Scheme, s.MetricsPath
	if scheme == "" {
		scheme = "http"
	}
	if path == "" {
		path = "/metrics"
	}
	return (&url.URL{Scheme: scheme, Host: address, Path: path}).String()
}

// checkHTTPURL accepts only absolute http(s) URLs; the error quotes nothing of the URL, which may hold a secret.
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return errors.New("not an absolute http(s) URL")
	}
	return nil
}

// Discoverer is one running source.
type Discoverer interface {
	// Discover answers the source's targets now, at most max of them; truncated says the source had more.
	Discover(ctx context.Context, max int) (targets []Target, truncated bool, err error)
	// Close ends the source's background work (a Kubernetes watch).
	Close()
}

// hostPort joins a host and port, bracketing IPv6 addresses.
func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
