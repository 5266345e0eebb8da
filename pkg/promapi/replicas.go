package promapi

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"
)

// ReplicaNotice says that series differ only by label, a replica's external label: an HA pair queried without
// deduplication, where every sum, rate and quantile counts each replica.
func ReplicaNotice(label string) string {
	return fmt.Sprintf("vLLM series come twice or more, differing only by the label %q (an HA pair queried without deduplication): "+
		"sums and rates count every replica. Query through Thanos Query started with --query.replica-label=%s "+
		"(or deduplicate where the samples are stored: the Mimir/Cortex HA tracker, VictoriaMetrics -dedup.minScrapeInterval)", label, label)
}

// replicaLike matches the names HA setups give the label that tells replicas apart (replica, prometheus_replica,
// __replica__, receive_replica, …): only those are checked, as other labels (engine, dp, Ray Serve's ReplicaId)
// split series by design.
var replicaLike = regexp.MustCompile(`(?i)(^|_)replica(_|$)`)

// legacyLabel is a label name that can appear unquoted in a selector.
var legacyLabel = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// maxLabelNames bounds the label names kept from one answer: a real server has dozens.
const maxLabelNames = 10000

// LabelNames lists the label names on series matching any of the selectors (at most maxLabelNames).
func (c *Client) LabelNames(ctx context.Context, match []string, start, end time.Time) ([]string, []string, error) {
	return c.labels(ctx, "/api/v1/labels", "label names", match, start, end, maxLabelNames)
}

// ReplicaLabels returns the replica-like labels by which otherwise identical vLLM series differ at the instant at
// (over the five minutes before it): none where the server deduplicates (Thanos Query with --query.replica-label
// drops the label) or holds one copy.
func (c *Client) ReplicaLabels(ctx context.Context, at time.Time) ([]string, error) {
	names, _, err := c.LabelNames(ctx, []string{FamilySelector}, at.Add(-5*time.Minute), at)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range names {
		if !replicaLike.MatchString(l) || !legacyLabel.MatchString(l) {
			continue
		}
		// Aggregations drop the metric name, so it is copied into a label first: otherwise two families with the
		// same labels would count as copies.
		v, _, err := c.Query(ctx, fmt.Sprintf(`count(count without (%s) (label_replace(%s, "inferscope_name", "$1", "__name__", "(.+)")) > 1)`,
			l, FamilySelector), at)
		if err != nil {
			return nil, err
		}
		if len(v) > 0 && v[0].Value > 0 {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out, nil
}

// replicaCache holds ReplicaLabels' last answer for DefaultNamesTTL, so a dashboard's panels share one check; past
// it, the answer serves while a background check asks again (lookup.go).
type replicaCache struct {
	mu      sync.Mutex
	labels  []string
	fetched time.Time
	lookup  revalidator
}

// notices are the replica notices for a range ending at to; a failed check gives none (the query's own answer
// says whether the server is reachable).
func (rc *replicaCache) notices(ctx context.Context, c *Client, to time.Time) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch ageOf(rc.fetched, time.Now(), DefaultNamesTTL) {
	case stale:
		rc.lookup.start(ctx, func(ctx context.Context) {
			if labels, err := c.ReplicaLabels(ctx, to); err == nil {
				rc.mu.Lock()
				rc.labels, rc.fetched = labels, time.Now()
				rc.mu.Unlock()
			}
		})
	case expired:
		labels, err := c.ReplicaLabels(ctx, to)
		if err != nil {
			return nil
		}
		rc.labels, rc.fetched = labels, time.Now()
	}
	out := make([]string, 0, len(rc.labels))
	for _, l := range rc.labels {
		out = append(out, ReplicaNotice(l))
	}
	return out
}
