package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
)

// A Prometheus that scrapes the fleet itself stamps a scrape's samples with the scrape's time and commits them, its
// up sample among them, in one transaction that queries see whole; its targets are scraped one scrape after the
// other, a scrape interval apart. So once a target's newest up sample is stamped at T, its next samples are stamped
// about an interval later: no sample stamped at or before T + 0.8 × interval will come from it any more (the fifth
// left is for a scrape that started late: the next one keeps the schedule, not the lateness). A rule group likewise
// stamps one evaluation's samples alike, one evaluation after the other, exactly its interval apart (its schedule,
// not the clock), and the generated groups end with a heartbeat (EvaluatedName) written after their other rules. A
// range query's steps up to the oldest of those times are final, whatever the overlap window says. The Horizon
// reads the newest up sample of each job and the newest heartbeat of each group in one small instant query (the
// intervals from the targets and rules APIs, with the server's kind), so a refresh asks the server only for the
// steps after the scrapes and evaluations still under way, and a refresh within a step asks nothing.
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
	kind       serverKind
	kindLookup revalidator
	readAt     time.Time
	final      time.Time
	known      bool
}

// serverKind is what the Horizon asks of a server every horizonServerTTL.
type serverKind struct {
	scrapes      bool // a Prometheus taking samples only from its scrapes
	orderedRules bool // and evaluating a group's rules in order
	// jobIntervals and groupIntervals are the shortest scrape interval of each job's active targets and each rule
	// group's interval; a job or group not listed is taken to have none (its newest sample's time is the horizon).
	jobIntervals, groupIntervals map[string]time.Duration
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

// read asks the server, under h.mu. The server's kind is asked again every horizonServerTTL, in the background
// while the kind asked before serves (lookup.go).
func (h *Horizon) read(ctx context.Context, now time.Time) (time.Time, bool) {
	switch ageOf(h.kindAsked, now, horizonServerTTL) {
	case expired:
		kind := h.askServer(ctx)
		if ctx.Err() != nil {
			return time.Time{}, false
		}
		h.kind, h.kindAsked = kind, now
	case stale:
		h.kindLookup.start(ctx, func(ctx context.Context) {
			kind := h.askServer(ctx)
			if ctx.Err() != nil {
				return // the kind asked before serves on; the next read tries again
			}
			h.mu.Lock()
			h.kind, h.kindAsked = kind, now
			h.mu.Unlock()
		})
	}
	if !h.kind.scrapes {
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
	if recorded && !h.kind.orderedRules {
		return time.Time{}, false
	}
	v, warns, err := h.Client.Query(ctx, horizonQuery(jobs), now)
	if err != nil || len(warns) > 0 {
		return time.Time{}, false
	}
	return horizonOf(v, recorded, h.kind)
}

// askServer asks the server's kind and, of a server that proved a scraping Prometheus, the intervals of its jobs
// and rule groups.
func (h *Horizon) askServer(ctx context.Context) serverKind {
	kind := askKind(ctx, h.Client)
	if !kind.scrapes || ctx.Err() != nil {
		return kind
	}
	jobs, err := h.Jobs(ctx)
	kind.jobIntervals, kind.groupIntervals = scrapeIntervals(ctx, h.Client, jobSet(jobs, err)), groupIntervals(ctx, h.Client)
	return kind
}

// horizonQuery is the newest scrape of each job's targets (the oldest of them), as h="up", and the newest
// evaluation of each generated rule group, as h="rules" (absent without the rules).
func horizonQuery(jobs []string) string {
	up := "up"
	if len(jobs) <= maxHorizonJobs {
		up = `up{job=~` + strconv.Quote(AnyOf(jobs)) + `}`
	}
	return `min by (h, job, ` + EvaluatedGroupLabel + `) (label_replace(timestamp(` + up + `), "h", "up", "", "") or label_replace(timestamp(` +
		EvaluatedName + `), "h", "rules", "", ""))`
}

// scrapeSlack is the part of a scrape interval left for a scrape that started late (see above).
const scrapeSlack = 5

// horizonOf reads horizonQuery's answer: the oldest of each job's newest scrape plus 0.8 of its interval and each
// group's newest evaluation plus its interval (less a millisecond: a sample stamped then is not final yet), the
// rules' required where recorded, a heartbeat for every generated group the rules API lists.
func horizonOf(v model.Vector, recorded bool, kind serverKind) (time.Time, bool) {
	final := int64(math.MaxInt64)
	hasUp, beats := false, map[string]bool{}
	for _, s := range v {
		t := float64(s.Value)
		if !(t > 0 && t < 1e11) { // NaN, or no time a sample may carry (seconds: 1e11 is the year 5138)
			return time.Time{}, false
		}
		at := int64(t * 1000)
		switch s.Metric["h"] {
		case "up":
			hasUp = true
			i := kind.jobIntervals[string(s.Metric["job"])]
			final = min(final, at+(i-i/scrapeSlack).Milliseconds())
		case "rules":
			if !recorded {
				continue
			}
			group := string(s.Metric[EvaluatedGroupLabel])
			beats[group] = true
			if i := kind.groupIntervals[group]; i > 0 {
				at += i.Milliseconds() - 1
			}
			final = min(final, at)
		}
	}
	if !hasUp || recorded && len(beats) == 0 {
		return time.Time{}, false
	}
	for group := range kind.groupIntervals {
		if recorded && strings.HasPrefix(group, RuleGroupPrefix) && !beats[group] {
			return time.Time{}, false // a generated group without its heartbeat (an older rules file): its series may still change
		}
	}
	return time.UnixMilli(final), true
}

// askKind asks whether the server is a Prometheus whose samples come from its scrapes only and whether it evaluates a
// group's rules in order; Horizon.read adds the intervals of its jobs and rule groups.
func askKind(ctx context.Context, c *Client) (k serverKind) {
	version, ok, err := c.BuildInfo(ctx)
	if err != nil || !ok || c.VictoriaMetrics() {
		return k
	}
	if major, err := strconv.Atoi(strings.SplitN(version, ".", 2)[0]); err != nil || major < 2 {
		return k // Thanos (0.x) and Cortex (1.x) answer buildinfo too
	}
	data, err := c.status(ctx, "/api/v1/status/flags")
	if err != nil {
		return k // Mimir answers buildinfo with its own 2.x but has no flags
	}
	var flags map[string]string
	if json.Unmarshal(data, &flags) != nil || len(flags) == 0 {
		return k
	}
	features := "," + strings.ReplaceAll(flags["enable-feature"], " ", "") + ","
	for _, f := range []string{"web.enable-remote-write-receiver", "web.enable-otlp-receiver", "agent"} {
		if flags[f] == "true" {
			return k
		}
	}
	for _, f := range []string{"remote-write-receiver", "otlp-write-receiver"} {
		if strings.Contains(features, ","+f+",") {
			return k
		}
	}
	k.scrapes, k.orderedRules = true, !strings.Contains(features, ",concurrent-rule-eval,")
	return k
}

// jobSet is the jobs whose up samples horizonQuery reads, as scrapeIntervals keeps them: nil (every job) where they
// are unknown or more than maxHorizonJobs.
func jobSet(jobs []string, err error) map[string]bool {
	if err != nil || len(jobs) > maxHorizonJobs {
		return nil
	}
	out := map[string]bool{}
	for _, j := range jobs {
		out[j] = true
	}
	return out
}

// maxIntervalEntries bounds the targets or rule groups read from one targets or rules answer: past it the intervals
// are unknown, and each job's newest scrape (each group's newest evaluation) is its own horizon.
const maxIntervalEntries = 200_000

// scrapeIntervals is the shortest scrape interval of each job's active targets (/api/v1/targets), jobs among keep
// (all where keep is nil); none where the server does not say (before Prometheus 2.3x) or the answer is not one.
func scrapeIntervals(ctx context.Context, c *Client, keep map[string]bool) map[string]time.Duration {
	out := map[string]time.Duration{}
	err := eachOf(ctx, c, "/api/v1/targets", url.Values{"state": {"active"}}, "activeTargets", func(dec *json.Decoder) error {
		var t struct {
			Labels struct {
				Job string `json:"job"`
			} `json:"labels"`
			ScrapeInterval string `json:"scrapeInterval"`
		}
		if err := dec.Decode(&t); err != nil {
			return err
		}
		if keep != nil && !keep[t.Labels.Job] {
			return nil
		}
		i, err := model.ParseDuration(t.ScrapeInterval)
		if err != nil || i <= 0 {
			out[t.Labels.Job] = -1 // unknown for one target: none for the job
			return nil
		}
		if have, ok := out[t.Labels.Job]; !ok || have > 0 && time.Duration(i) < have {
			out[t.Labels.Job] = time.Duration(i)
		}
		return nil
	})
	if err != nil {
		return nil
	}
	for job, i := range out {
		if i < 0 {
			delete(out, job)
		}
	}
	return out
}

// groupIntervals is the interval of each recording rule group (/api/v1/rules).
func groupIntervals(ctx context.Context, c *Client) map[string]time.Duration {
	out := map[string]time.Duration{}
	seen := map[string]bool{}
	err := eachOf(ctx, c, "/api/v1/rules", url.Values{"type": {"record"}}, "groups", func(dec *json.Decoder) error {
		var g struct {
			Name     string  `json:"name"`
			Interval float64 `json:"interval"` // seconds
		}
		if err := dec.Decode(&g); err != nil {
			return err
		}
		// Two files may hold groups of one name: the shorter interval, whose next evaluation comes first.
		if i := time.Duration(g.Interval * float64(time.Second)); g.Interval > 0 && (!seen[g.Name] || i < out[g.Name]) {
			out[g.Name] = i
		}
		seen[g.Name] = true
		return nil
	})
	if err != nil {
		return nil
	}
	return out
}

// eachOf calls each with the decoder at every element of the array under field of an answer's data object, one
// element at a time and at most maxIntervalEntries of them, never holding the answer: a server with a hundred
// thousand targets answers the targets API with hundreds of megabytes. An answer not shaped so is an error.
func eachOf(ctx context.Context, c *Client, path string, params url.Values, field string, each func(*json.Decoder) error) error {
	found := false
	_, err := c.stream(ctx, path, params, http.MethodGet, func(dec *json.Decoder) error {
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return err
			}
			if key != field {
				if err := skipValue(dec); err != nil {
					return err
				}
				continue
			}
			if err := expectDelim(dec, '['); err != nil {
				return err
			}
			for n := 0; dec.More(); n++ {
				if n == maxIntervalEntries {
					return errTooMany
				}
				if err := each(dec); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ]
				return err
			}
			found = true
		}
		_, err := dec.Token() // }
		return err
	})
	if err == nil && !found {
		err = errors.New(path + " answered without " + field)
	}
	return err
}

// errTooMany ends eachOf past maxIntervalEntries.
var errTooMany = errors.New("too many entries")

// skipValue consumes the next JSON value token by token, holding no more of it than one string.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
