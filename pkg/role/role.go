// Package role tells the instances of a disaggregated prefill/decode deployment apart from what each one's NIXL KV
// connector reports, and answers what needs the roles: a query's role filter, groupBy role, the role label on its
// series, and the end-to-end TTFT of a prefill/decode pair. It works through a data source's query path (Eval), so
// the roles and the answers are the same in direct and Prometheus mode.
package role

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/parallel"
	"github.com/inferscope/inferscope-vllm/pkg/measure"
	"github.com/inferscope/inferscope-vllm/pkg/query"
)

// Roles an endpoint can have.
const (
	// Unified instances run no NIXL connector: they prefill and decode their own requests.
	Unified = "unified"
	// Prefill instances compute prompts and hold their KV until a decode instance has read it.
	Prefill = "prefill"
	// Decode instances pull prompt KV from prefill instances and generate the output.
	Decode = "decode"
	// Both marks an instance seen pulling KV and holding KV for others (kv_both).
	Both = "both"
	// Undetermined instances run a NIXL connector but showed neither side's work over the span (idle).
	Undetermined = "undetermined"
)

// Label is the label that carries an endpoint's role on series.
const Label = "role"

// Span is how long before a query's end decides the roles, whatever the query's range: long enough that a live
// stream's few seconds or a short panel range do not make a quiet decode instance look like a prefill one, and a
// bounded cost for a week-long range.
const Span = time.Hour

// evidencePoints is the number of steps an evidence query reads over the span: steps of 15 s over a full span, so
// the newest scrapes decide too (a young fleet's first minute would fall between coarser steps).
const evidencePoints = int64(Span / (15 * time.Second))

// Evidence is what an endpoint showed over the span.
type Evidence struct {
	// NIXL: it exposes the NIXL connector's metrics.
	NIXL bool
	// Pulls: it completed or failed KV transfers, which the instance that reads the KV records.
	Pulls bool
	// Holds: it held KV for a remote reader (KV it held expired unread at some step).
	Holds bool
	// Prompts: it computed prompt tokens.
	Prompts bool
}

// Decide is the role evidence shows. Only expired KV shows holding, which a healthy pair never has, so a NIXL
// instance that computes prompts and pulls nothing is a prefill instance too: vLLM's NIXL connector registers its
// histograms on both sides, and only the reader observes transfers.
func Decide(e Evidence) string {
	switch {
	case !e.NIXL:
		return Unified
	case e.Pulls && e.Holds:
		return Both
	case e.Pulls:
		return Decode
	case e.Holds || e.Prompts:
		return Prefill
	}
	return Undetermined
}

// Eval answers one query in the data source's mode.
type Eval func(ctx context.Context, q query.Query, r query.Request) (*query.Result, error)

// evidenceRead is a catalog output roles are read from, and what a value above 0 at some step shows.
type evidenceRead struct {
	entry  *measure.Entry
	output int // of the entry's outputs
	show   func(e *Evidence)
}

// evidence are the catalog outputs roles are read from, and what a value above 0 at some step shows. Any series
// of a NIXL entry shows the connector runs; finished requests (counters every flavor creates at start, Dynamo's
// frontend included) list every endpoint, so idle unified ones have a role too.
var evidence = []evidenceRead{
	{measure.ThroughputRequests, 0, func(*Evidence) {}},
	{measure.KVTransferThroughput, 1, func(e *Evidence) { e.Pulls = true }},
	{measure.KVTransferFailures, 0, func(e *Evidence) { e.Pulls = true }},
	{measure.KVTransferExpired, 0, func(e *Evidence) { e.Holds = true }},
	{measure.KVTransferExpired, 1, func(e *Evidence) { e.Pulls = true }},
	{measure.ThroughputPrompt, 0, func(e *Evidence) { e.Prompts = true }},
}

// Resolve returns the role of every endpoint the endpoint regular expression selects, from the Span before r's end.
func Resolve(ctx context.Context, eval Eval, endpoint string, r query.Request) (map[string]string, error) {
	span := query.Request{From: r.To.Add(-Span), To: r.To, MaxDataPoints: evidencePoints}
	type answer struct {
		res *query.Result
		err error
	}
	answers := parallel.Map(evidence, func(ev evidenceRead) (a answer) {
		a.res, a.err = eval(ctx, query.Query{QueryType: ev.entry.Type, Measure: ev.entry.Name, Endpoint: endpoint, GroupBy: query.GroupEndpoint}, span)
		return a
	})
	seen := map[string]*Evidence{}
	for i, ev := range evidence {
		if answers[i].err != nil {
			return nil, fmt.Errorf("resolving prefill/decode roles: %w", answers[i].err)
		}
		nixl := ev.entry.Type == query.TypeKVTransfer
		for _, o := range answers[i].res.Outputs {
			ep := o.Labels["endpoint"]
			if ep == "" || o.Measure != ev.entry.Outputs[ev.output].Name {
				continue
			}
			e := seen[ep]
			if e == nil {
				e = &Evidence{}
				seen[ep] = e
			}
			e.NIXL = e.NIXL || nixl
			for _, p := range o.Points {
				if p.V > 0 {
					ev.show(e)
					break
				}
			}
		}
	}
	roles := make(map[string]string, len(seen))
	for ep, e := range seen {
		roles[ep] = Decide(*e)
	}
	return roles, nil
}

// Answer answers a query through eval, resolving roles first when the query needs them (query.NeedsRoles): the
// role filter narrows the endpoint filter to the endpoints of matching roles, groupBy role evaluates each role's
// endpoints as one fleet, and every series of a single endpoint, or of endpoints sharing one role, carries the
// role label. cache (nil for none) keeps resolutions for CacheTTL.
func Answer(ctx context.Context, eval Eval, q query.Query, r query.Request, cache *Cache) (*query.Result, error) {
	if err := q.EnsureValid(); err != nil {
		return nil, err
	}
	if !q.NeedsRoles() {
		return eval(ctx, q, r)
	}
	roles, err := cache.Resolve(ctx, eval, q.Endpoint, r)
	if err != nil {
		return nil, err
	}
	re := q.RoleMatcher()
	byRole := map[string][]string{}
	for ep, role := range roles {
		if re == nil || re.MatchString(role) {
			byRole[role] = append(byRole[role], ep)
		}
	}
	if q.ReadsPD() {
		if readsPDBalance(q) {
			return pdBalance(ctx, eval, q, r, byRole)
		}
		return pdTTFT(ctx, eval, q, r, byRole)
	}
	names := slices.Sorted(maps.Keys(byRole))
	if len(names) == 0 {
		return &query.Result{Notices: []string{noRoleNotice(q.Role, roles)}}, nil
	}
	if q.GroupBy != query.GroupRole {
		var eps []string
		for _, role := range names {
			eps = append(eps, byRole[role]...)
		}
		sub, err := narrowed(q, eps, q.GroupBy)
		if err != nil {
			return nil, err
		}
		res, err := eval(ctx, sub, r)
		if err != nil {
			return nil, err
		}
		for i := range res.Outputs {
			o := &res.Outputs[i]
			switch {
			case len(names) == 1:
				o.Labels = withLabel(o.Labels, names[0])
			case o.Labels["endpoint"] != "":
				o.Labels = withLabel(o.Labels, roles[o.Labels["endpoint"]])
			}
		}
		return res, nil
	}
	var out *query.Result
	seen := map[string]bool{}
	for _, role := range names {
		sub, err := narrowed(q, byRole[role], query.GroupFleet)
		if err != nil {
			return nil, err
		}
		res, err := eval(ctx, sub, r)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = &query.Result{Step: res.Step, Window: res.Window}
		}
		for _, o := range res.Outputs {
			o.Labels = withLabel(o.Labels, role)
			out.Outputs = append(out.Outputs, o)
		}
		for _, n := range res.Notices {
			if !seen[n] {
				seen[n] = true
				out.Notices = append(out.Notices, n)
			}
		}
	}
	return out, nil
}

// narrowed is q restricted to the endpoints eps (already selected by q's endpoint filter), without its role
// filter, grouped by group.
func narrowed(q query.Query, eps []string, group query.Group) (query.Query, error) {
	sort.Strings(eps)
	quoted := make([]string, len(eps))
	for i, ep := range eps {
		quoted[i] = regexp.QuoteMeta(ep)
	}
	q.Endpoint, q.Role, q.GroupBy = strings.Join(quoted, "|"), "", group
	if len(q.Endpoint) > query.MaxMatcherBytes {
		return q, query.Invalid(fmt.Errorf("the role selects %d endpoints, more than one endpoint matcher holds: narrow the endpoint filter", len(eps)))
	}
	return q, q.Validate()
}

// withLabel is labels plus the role label, copied: an engine's cached outputs must not change under it.
func withLabel(labels map[string]string, role string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[Label] = role
	return out
}

// noRoleNotice says why a role filter selected nothing, with the roles there are.
func noRoleNotice(filter string, roles map[string]string) string {
	list := distinct(roles)
	if len(list) == 0 {
		return "no endpoint selected: roles are read from endpoints that have been scraped"
	}
	return fmt.Sprintf("no selected endpoint has a role matching %q; the selected endpoints' roles are %s", filter, strings.Join(list, ", "))
}

// distinct is the roles of an endpoint → role map, each once, sorted.
func distinct(roles map[string]string) []string {
	set := map[string]bool{}
	for _, role := range roles {
		set[role] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// Roles lists the roles of the endpoints the endpoint regular expression selects, for a template variable.
func Roles(ctx context.Context, eval Eval, endpoint string, r query.Request, cache *Cache) ([]string, error) {
	roles, err := cache.Resolve(ctx, eval, endpoint, r)
	if err != nil {
		return nil, err
	}
	return distinct(roles), nil
}
