package discovery

import (
	"strconv"
)

// Kubernetes roles: what a kubernetes source lists and watches, in Prometheus's words.
const (
	KubernetesRolePod           = "pod"
	KubernetesRoleEndpointSlice = "endpointslice"
)

// KubernetesRoles lists the roles in the order the config editor offers them.
var KubernetesRoles = []string{KubernetesRolePod, KubernetesRoleEndpointSlice}

// kubernetesRole is the source's role, pod unless set.
func (s Source) kubernetesRole() string {
	if s.KubernetesRole == "" {
		return KubernetesRolePod
	}
	return s.KubernetesRole
}

// maxSliceEndpoints bounds the endpoints read of one EndpointSlice (the API server allows 1000).
const maxSliceEndpoints = 1000

// endpointSlice is the part of a discovery.k8s.io/v1 EndpointSlice discovery reads.
type endpointSlice struct {
	Metadata    objectMeta `json:"metadata"`
	AddressType string     `json:"addressType"`
	Endpoints   []struct {
		Addresses  []string `json:"addresses"`
		Conditions struct {
			Ready       *bool `json:"ready"`
			Serving     *bool `json:"serving"`
			Terminating *bool `json:"terminating"`
		} `json:"conditions"`
		Hostname  string `json:"hostname"`
		NodeName  string `json:"nodeName"`
		TargetRef *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"targetRef"`
	} `json:"endpoints"`
	Ports []struct {
		Name string `json:"name"`
		Port int    `json:"port"`
	} `json:"ports"`
}

func (e *endpointSlice) key() string { return e.Metadata.Namespace + "/" + e.Metadata.Name }

// weight counts the slice's endpoints (one at least, so that empty slices are bounded too).
func (e *endpointSlice) weight() int { return max(1, len(e.Endpoints)) }

// targets are the slice's endpoints that are not terminating, at the source's port (a named port of the slice, or
// the port number), with the slice's labels under their names and Prometheus's __meta_kubernetes_endpointslice_*
// names for the rest. __meta_kubernetes_pod_name is the endpoint's pod, so names default to pod names as with the
// pod role; the pod's own labels are not in a slice (the pod role reads them).
func (e *endpointSlice) targets(s Source) []Target {
	port, portName := s.Port, ""
	if s.PortName != "" {
		port = 0
		for _, p := range e.Ports {
			if p.Name == s.PortName {
				port, portName = p.Port, p.Name
			}
		}
	}
	if port <= 0 || port > 65535 || e.Metadata.DeletionTimestamp != nil {
		return nil
	}
	var out []Target
	for i, ep := range e.Endpoints {
		if i == maxSliceEndpoints {
			break
		}
		c := ep.Conditions
		if len(ep.Addresses) == 0 || len(ep.Addresses[0]) > MaxValueBytes || (c.Terminating != nil && *c.Terminating) {
			continue
		}
		// The addresses of one endpoint are fungible (the API's words): one target each.
		addr := hostPort(ep.Addresses[0], port)
		labels := ownLabels(e.Metadata.Labels, 12)
		labels[LabelAddress] = addr
		labels["__meta_kubernetes_namespace"] = e.Metadata.Namespace
		labels["__meta_kubernetes_endpointslice_name"] = e.Metadata.Name
		labels["__meta_kubernetes_endpointslice_address_type"] = e.AddressType
		labels["__meta_kubernetes_endpointslice_port"] = strconv.Itoa(port)
		labels["__meta_kubernetes_endpointslice_port_name"] = portName
		labels["__meta_kubernetes_endpointslice_endpoint_hostname"] = ep.Hostname
		labels["__meta_kubernetes_endpointslice_endpoint_node_name"] = ep.NodeName
		// A condition the API server left out is unknown; Kubernetes reads a missing ready as ready.
		labels["__meta_kubernetes_endpointslice_endpoint_conditions_ready"] = strconv.FormatBool(c.Ready == nil || *c.Ready)
		if svc := e.Metadata.Labels["kubernetes.io/service-name"]; svc != "" {
			labels["__meta_kubernetes_service_name"] = svc
		}
		if ref := ep.TargetRef; ref != nil && len(ref.Name) <= MaxValueBytes && len(ref.Kind) <= MaxValueBytes {
			labels["__meta_kubernetes_endpointslice_address_target_kind"] = ref.Kind
			labels["__meta_kubernetes_endpointslice_address_target_name"] = ref.Name
			if ref.Kind == "Pod" {
				labels["__meta_kubernetes_pod_name"] = ref.Name
			}
		}
		out = append(out, Target{Address: addr, Labels: labels})
	}
	return out
}
