package datasource

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"

	"github.com/inferscope/inferscope-vllm/pkg/promapi"
	"github.com/inferscope/inferscope-vllm/pkg/role"
)

// promRoles reads, in Prometheus mode, the role label the user's Prometheus attaches to vLLM series (relabelled
// from a pod label such as llm-d.ai/role by kubernetes_sd), by instance, so role detection uses it where present.
// One instant query per role.CacheTTL; a failed query leaves the evidence alone.
type promRoles struct {
	client *promapi.Client
	label  string

	mu    sync.Mutex
	at    time.Time
	roles map[string]string
}

// promLabelName is a Prometheus label name, the only thing the roleLabel setting may hold in Prometheus mode.
var promLabelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,127}$`)

// declared is role.Declared for Prometheus mode.
func (p *promRoles) declared(ctx context.Context) map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.roles != nil && time.Since(p.at) < role.CacheTTL {
		return p.roles
	}
	// count by keeps the answer to one sample per instance and role, whatever the number of series.
	sel := strings.TrimSuffix(promapi.FamilySelector, "}") + "," + p.label + `!=""}`
	vec, _, err := p.client.Query(ctx, "count by (instance, "+p.label+") ("+sel+")", time.Now())
	if err != nil {
		return p.roles
	}
	roles := make(map[string]string, len(vec))
	for _, s := range vec {
		roles[string(s.Metric["instance"])] = string(s.Metric[model.LabelName(p.label)])
	}
	p.roles, p.at = roles, time.Now()
	return roles
}
