package promapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
)

// A Prometheus that scrapes the fleet itself stamps a scrape's samples with the scrape's time and commits them, its
// up sample among them, in one transaction that queries see whole; its targets are scraped one scrape after the
// other. So once every target's newest up sample is stamped at or after t, no sample stamped at or before t will
// come from a scrape any more: a range query's steps up to t are final, whatever the overlap window says. A rule
// group likewise stamps one evaluation's samples alike, one evaluation after the other, and the generated groups
// end with a heartbeat (EvaluatedName) written after their other rules. The Horizon reads both in one small instant
// query, so a refresh asks the server only for the steps after the newest scrape every target has had, one or two,
// instead of the whole overlap window, and a refresh within a step often asks nothing.
//
// That holds for a Prometheus that scrapes, not for samples that arrive otherwise: remote write or OTLP into the
// server, Thanos, Mimir, Cortex and VictoriaMetrics, whose samples reach the store in no order across series. So the
// Horizon answers only for a server that says it is Prometheus 2 or later (buildinfo) and, in its flags, that it
// takes no remote write or OTLP and is no agent; for the rules' part, that it evaluates a group's rules in order (no
// concurrent-rule-eval). Anywhere else, or when a read fails, the overlap window alone decides, as before. Samples
// carrying their own timestamps (federation, the Pushgateway) and several replicas behind one address are outside
// what it can see: the README says to turn incremental querying off there.

// HorizonTTL is how long one read of the horizon serves: the panels of a refresh share it.
const HorizonTTL = time.Second

// horizonServerTTL is how long the server's kind (buildinfo, flags) is trusted before it is asked again.
const horizonServerTTL = DefaultNamesTTL

// horizonTimeout bounds one read: a slow server costs the refresh this much at most, then the overlap window decides.
const horizonTimeout = 5 * time.Second

// maxHorizonJobs bounds the jobs a horizon query names; past it every target's up counts.
const maxHorizonJobs = 200

// Horizon reads, for Results, the newest step a Prometheus that scrapes the fleet will not answer differently.
type Horizon struct {
	Client *Client
	// Jobs lists the scrape jobs of the targets the queries read (Discovery.Jobs): only their up samples count.
	Jobs func(context.Context) ([]string, error)
	// Recorded reports whether the server holds the generated rules' series, whose groups' heartbeats then count.
	Recorded func(context.Context) (bool, error)

	mu         sync.Mutex
	kindAsked  time.Time
	scrapes    bool // the server is a Prometheus taking samples only from its scrapes
	orderedRul bool // and evaluates a group's rules in order
	readAt     time.Time
	final      time.Time
	known      bool
}

// Final is the newest time at or before which the server holds, and will go on holding, every sample; known is
// false when the server cannot tell (see above), and the overlap window then decides alone.
func (h *Horizon) Final(ctx context.Context, now time.Time) (final time.Time, known bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.readAt.IsZero() && now.Sub(h.readAt) >= 0 && now.Sub(h.readAt) < HorizonTTL {
		return h.final, h.known
	}
	read, cancel := context.WithTimeout(ctx, horizonTimeout)
	defer cancel()
	h.final, h.known = h.read(read, now)
	if ctx.Err() == nil { // a cancelled request's failure is not the server's: the next one asks again
		h.readAt = now // a slow server's too, or each panel behind it would wait horizonTimeout in turn
	}
	return h.final, h.known
}

// read asks the server, under h.mu.
func (h *Horizon) read(ctx context.Context, now time.Time) (time.Time, bool) {
	if h.kindAsked.IsZero() || now.Sub(h.kindAsked) >= horizonServerTTL || now.Before(h.kindAsked) {
		h.scrapes, h.orderedRul = h.kind(ctx)
		if ctx.Err() != nil {
			return time.Time{}, false
		}
		h.kindAsked = now
	}
	if !h.scrapes {
		return time.Time{}, false
	}
	jobs, err := h.Jobs(ctx)
	if err != nil || len(jobs) == 0 {
		return time.Time{}, false
	}
	recorded := false
	if h.Recorded != nil {
		if recorded, err = h.Recorded(ctx); err != nil {
			return time.Time{}, false
		}
	}
	if recorded && !h.orderedRul {
		return time.Time{}, false
	}
	v, warns, err := h.Client.Query(ctx, horizonQuery(jobs), now)
	if err != nil || len(warns) > 0 {
		return time.Time{}, false
	}
	return horizonOf(v, recorded)
}

// horizonQuery is the newest scrape every target of jobs has had, as h="up", and the newest evaluation every
// generated rule group has had, as h="rules" (absent without the rules).
func horizonQuery(jobs []string) string {
	up := "up"
	if len(jobs) <= maxHorizonJobs {
		up = `up{job=~` + strconv.Quote(AnyOf(jobs)) + `}`
	}
	return `min by (h) (label_replace(min(timestamp(` + up + `)), "h", "up", "", "") or label_replace(min(timestamp(` +
		EvaluatedName + `)), "h", "rules", "", ""))`
}

// horizonOf reads horizonQuery's answer: the older of the two times, the rules' required where recorded.
func horizonOf(v model.Vector, recorded bool) (time.Time, bool) {
	var up, rules model.SampleValue
	var hasUp, hasRules bool
	for _, s := range v {
		switch s.Metric["h"] {
		case "up":
			up, hasUp = s.Value, true
		case "rules":
			rules, hasRules = s.Value, true
		}
	}
	if !hasUp || recorded && !hasRules {
		return time.Time{}, false
	}
	final := float64(up)
	if recorded {
		final = min(final, float64(rules))
	}
	if !(final > 0 && final < 1e11) { // NaN, or no time a sample may carry (seconds: 1e11 is the year 5138)
		return time.Time{}, false
	}
	return time.UnixMilli(int64(final * 1000)), true
}

// kind asks whether the server is a Prometheus whose samples come from its scrapes only, and whether it evaluates a
// group's rules in order.
func (h *Horizon) kind(ctx context.Context) (scrapes, orderedRules bool) {
	version, ok, err := h.Client.BuildInfo(ctx)
	if err != nil || !ok || h.Client.VictoriaMetrics() {
		return false, false
	}
	if major, err := strconv.Atoi(strings.SplitN(version, ".", 2)[0]); err != nil || major < 2 {
		return false, false // Thanos (0.x) and Cortex (1.x) answer buildinfo too
	}
	data, _, err := h.Client.call(ctx, "/api/v1/status/flags", nil, http.MethodGet)
	if err != nil {
		return false, false // Mimir answers buildinfo with its own 2.x but has no flags
	}
	var flags map[string]string
	if json.Unmarshal(data, &flags) != nil || len(flags) == 0 {
		return false, false
	}
	features := "," + strings.ReplaceAll(flags["enable-feature"], " ", "") + ","
	for _, f := range []string{"web.enable-remote-write-receiver", "web.enable-otlp-receiver", "agent"} {
		if flags[f] == "true" {
			return false, false
		}
	}
	for _, f := range []string{"remote-write-receiver", "otlp-write-receiver"} {
		if strings.Contains(features, ","+f+",") {
			return false, false
		}
	}
	return true, !strings.Contains(features, ",concurrent-rule-eval,")
}
