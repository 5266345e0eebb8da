package sim

import (
	"math"
	"math/rand/v2"
	"strconv"
)

// rng is a seeded random source; each consumer gets its own stream so that adding draws in one
// place does not reshuffle every other part of a run.
type rng struct{ *rand.Rand }

func newRNG(seed int64, stream uint64) *rng {
	return &rng{rand.New(rand.NewPCG(uint64(seed), stream*0x9E3779B97F4A7C15+1))} // #nosec G115 G404 -- a reproducible simulation stream from a seed, not a secret: a negative seed wrapping is harmless
}

// logNormal draws with the given mean (not median) and log-space sigma.
func (g *rng) logNormal(mean, sigma float64) float64 {
	mu := math.Log(mean) - sigma*sigma/2
	return math.Exp(mu + sigma*g.NormFloat64())
}

func (g *rng) chance(p float64) bool { return p > 0 && g.Float64() < p }

// request is one client request as the engine and the API server see it.
type request struct {
	id        int64
	arrival   float64 // seconds since start, at the API server
	promptLen int
	maxTokens int
	targetOut int    // tokens to generate before finishing
	endReason string // finish reason once targetOut is reached
	stream    bool

	engine        int
	scheduled     float64 // first time the scheduler picked it; -1 until then
	firstToken    float64 // -1 until the first token
	lastToken     float64
	generated     int
	computed      int // tokens whose KV is computed
	prefillTarget int // tokens to compute before the next token can be sampled
	blocks        int
	cachedFirst   int     // prefix-cache hit tokens at the first scheduling
	transferred   int     // prompt tokens whose KV arrived over NIXL (decode role)
	kvReady       float64 // when that KV has arrived; until then the request waits for it (WAITING_FOR_REMOTE_KVS)
	lora          string  // the LoRA adapter the request names; "" for the base model
	done          bool
}

// workload generates Poisson arrivals and request shapes.
type workload struct {
	cfg  *Config
	rng  *rng
	next float64 // time of the next arrival; +Inf when there is no load
	id   int64
}

func newWorkload(cfg *Config) *workload {
	w := &workload{cfg: cfg, rng: newRNG(cfg.Seed, 1)}
	w.next = w.draw(0)
	return w
}

func (w *workload) peakRate() float64 { return w.cfg.QPS * (1 + w.cfg.QPSWaveAmplitude) }

func (w *workload) rate(t float64) float64 {
	a := w.cfg.QPSWaveAmplitude
	if a == 0 {
		return w.cfg.QPS
	}
	period := float64(w.cfg.QPSWavePeriod) / 1e9
	return w.cfg.QPS * (1 + a*math.Sin(2*math.Pi*t/period))
}

// draw returns the first arrival after t, thinning a peak-rate Poisson process so the wave is exact.
func (w *workload) draw(t float64) float64 {
	peak := w.peakRate()
	if peak <= 0 {
		return math.Inf(1)
	}
	for {
		t += w.rng.ExpFloat64() / peak
		if w.cfg.QPSWaveAmplitude == 0 || w.rng.Float64()*peak <= w.rate(t) {
			return t
		}
	}
}

// clientMaxTokens is a typical mix of max_tokens values sent by chat clients.
var clientMaxTokens = []struct {
	v int
	w float64
}{{256, 0.1}, {512, 0.3}, {1024, 0.3}, {2048, 0.2}, {4096, 0.1}}

// pop returns the next request and schedules the one after it.
func (w *workload) pop() *request {
	c := w.cfg
	t := w.next
	w.next = w.draw(t)
	w.id++
	r := &request{id: w.id, arrival: t, scheduled: -1, firstToken: -1}

	r.promptLen = clampInt(int(math.Round(w.rng.logNormal(c.PromptTokensMean, c.PromptTokensSigma))), 4, c.MaxModelLen/2)
	r.maxTokens = c.MaxTokens
	if r.maxTokens == 0 {
		x := w.rng.Float64()
		for _, m := range clientMaxTokens {
			if x -= m.w; x <= 0 {
				r.maxTokens = m.v
				break
			}
		}
		if r.maxTokens == 0 {
			r.maxTokens = clientMaxTokens[len(clientMaxTokens)-1].v
		}
	}
	// vLLM caps max_tokens so prompt plus output fits the context.
	r.maxTokens = clampInt(r.maxTokens, 1, c.MaxModelLen-r.promptLen)
	natural := clampInt(int(math.Round(w.rng.logNormal(c.OutputTokensMean, c.OutputTokensSigma))), 1, c.MaxModelLen)
	r.targetOut, r.endReason = natural, "stop"
	if natural >= r.maxTokens {
		r.targetOut, r.endReason = r.maxTokens, "length"
	}
	// Aborts and errors cut a request short at a random point of its output.
	x := w.rng.Float64()
	switch {
	case x < c.AbortRate:
		r.targetOut, r.endReason = 1+w.rng.IntN(r.targetOut), "abort"
	case x < c.AbortRate+c.ErrorRate:
		r.targetOut, r.endReason = 1+w.rng.IntN(r.targetOut), "error"
	}
	if c.KVRole == KVRolePrefill {
		// The P/D proxy asks the prefill instance for one token; the decode instance generates the rest.
		r.targetOut, r.endReason = 1, "length"
	}
	r.stream = w.rng.chance(c.StreamRate)
	if c.LoRAAdapters > 0 && w.rng.chance(0.5) { // half the traffic names an adapter, evenly
		r.lora = "adapter-" + strconv.Itoa(w.rng.IntN(c.LoRAAdapters))
	}
	r.prefillTarget = r.promptLen
	return r
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
