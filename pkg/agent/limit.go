package agent

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/internal/httpjson"
)

// The guard's budgets. Authenticated callers are limited per credential, reads and changes apart, so no load of
// reads (a Viewer polling the app's page) can starve a switch or a profile stop; callers without a valid token and
// /healthz have small budgets of their own per source address, so neither can starve a token holder.
const (
	// DefaultRate and DefaultBurst are the token holder's requests per second and at once, reads and changes each
	// (-rate, -burst).
	DefaultRate  = 50
	DefaultBurst = 200
	// RefusedRate and RefusedBurst bound the requests without a valid token one source address gets answered with
	// 401; beyond them it gets 429.
	RefusedRate  = 2
	RefusedBurst = 10
	// HealthRate and HealthBurst bound /healthz per source address.
	HealthRate  = 5
	HealthBurst = 20
	// MaxTrackedAddresses bounds the per-address budgets kept; beyond it, addresses share one budget.
	MaxTrackedAddresses = 4096
	// RefusedSummaryInterval is how often refused requests are summed up in one audit line, instead of one line each.
	RefusedSummaryInterval = time.Minute
)

// guard authenticates first, then charges the caller's own budget: the credential's reads or changes for a valid
// token, the source address's /healthz or refusal budget otherwise.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case s.authorized(r):
			b := s.reads
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				b = s.writes
			}
			if !b.take() {
				s.refused.count(s.cfg.Audit, refusedLimited, r)
				tooMany(w)
				return
			}
		case r.URL.Path == PathHealth:
			if !s.health.take(sourceOf(r)) {
				tooMany(w)
				return
			}
		default:
			if !s.unauth.take(sourceOf(r)) {
				s.refused.count(s.cfg.Audit, refusedLimited, r)
				tooMany(w)
				return
			}
			s.refused.count(s.cfg.Audit, refusedToken, r)
			w.Header().Set("WWW-Authenticate", `Bearer realm="inferscope-agent"`)
			httpjson.Error(w, http.StatusUnauthorized, "missing or wrong agent token")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func tooMany(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	httpjson.Error(w, http.StatusTooManyRequests, "too many requests to the agent; retry in a second")
}

// sourceOf is the caller's IP address (the agent trusts no forwarding header).
func sourceOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// bucket is a token bucket: rate tokens a second up to burst.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int) *bucket {
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

func (b *bucket) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(time.Now())
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// refill adds what accrued since the last call; the caller holds mu.
func (b *bucket) refill(now time.Time) {
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
}

// full reports whether the bucket has refilled completely, so forgetting it loses nothing.
func (b *bucket) full(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	return b.tokens >= b.burst
}

// perAddress is a bucket per source address, at most MaxTrackedAddresses of them; when that many are busy, the
// others share one.
type perAddress struct {
	mu       sync.Mutex
	rate     float64
	burst    int
	max      int
	buckets  map[string]*bucket
	overflow *bucket
	swept    time.Time // when full buckets were last forgotten: at most once a second
}

func newPerAddress(rate float64, burst, max int) *perAddress {
	return &perAddress{rate: rate, burst: burst, max: max, buckets: map[string]*bucket{}, overflow: newBucket(rate, burst)}
}

func (p *perAddress) take(addr string) bool {
	p.mu.Lock()
	b, ok := p.buckets[addr]
	if !ok {
		if now := time.Now(); len(p.buckets) >= p.max && now.Sub(p.swept) >= time.Second {
			p.swept = now
			for a, old := range p.buckets {
				if old.full(now) {
					delete(p.buckets, a)
				}
			}
		}
		if len(p.buckets) < p.max {
			b = newBucket(p.rate, p.burst)
			p.buckets[addr] = b
		} else {
			b = p.overflow
		}
	}
	p.mu.Unlock()
	return b.take()
}

// Why a request was refused, for the summary line.
const (
	refusedToken   = "missing or wrong token"
	refusedLimited = "rate limited"
)

// refusals counts refused requests and writes one audit line summing them up per RefusedSummaryInterval, so a
// flood cannot fill the log.
type refusals struct {
	mu     sync.Mutex
	counts map[string]int
	total  int
	last   time.Time // when the last summary was written
	addr   string    // the last refused caller, as an example
	path   string
}

// count records one refusal and writes the summary when it is due.
func (c *refusals) count(audit *slog.Logger, reason string, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[reason]++
	c.total++
	c.addr, c.path = r.RemoteAddr, r.URL.Path
	if now := time.Now(); now.Sub(c.last) >= RefusedSummaryInterval {
		c.flushLocked(audit, now)
	}
}

// flush writes the summary of refusals not yet reported, if any.
func (c *refusals) flush(audit *slog.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked(audit, time.Now())
}

func (c *refusals) flushLocked(audit *slog.Logger, now time.Time) {
	if c.total == 0 {
		return
	}
	audit.Warn("refused requests", "count", c.total, "unauthorized", c.counts[refusedToken], "rate_limited", c.counts[refusedLimited],
		"last_remote", c.addr, "last_path", c.path)
	c.counts, c.total, c.last = map[string]int{}, 0, now
}
