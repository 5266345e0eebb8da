package sim

import (
	"math"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// engine is one vLLM EngineCore (one DP rank): a continuous-batching scheduler over a paged KV
// pool, advanced one model step at a time.
type engine struct {
	idx   int
	fleet *Fleet
	cfg   *Config
	rng   *rng
	clock float64 // end of the last step, seconds since start

	waiting requestQueue
	running []*request
	kv      kvPool

	st  *engineStats
	asc *ascendStats // nil unless the flavor is vllm-ascend

	specCond []float64 // P(position i accepted | position i-1 accepted)
	sched    []scheduledWork
	finished bool // a running request finished during the current step
	// iterCached are the prompt tokens of the prefills completed in the current step that were not computed (prefix
	// cache hits, KV pulled from a peer).
	iterCached int
}

type scheduledWork struct {
	r       *request
	n       int // tokens processed this step
	prefill bool
}

func newEngine(f *Fleet, idx int) *engine {
	cfg := &f.cfg
	e := &engine{
		idx:   idx,
		fleet: f,
		cfg:   cfg,
		rng:   newRNG(cfg.Seed, uint64(100+idx)), // #nosec G115 -- idx is an engine index, 0 to the engine count
		kv:    kvPool{total: cfg.NumGPUBlocks},
		st:    newEngineStats(cfg.Flavor, cfg.MaxModelLen, cfg.SpecTokens, f.bounds),
	}
	if cfg.Flavor == FlavorAscend {
		e.asc = newAscendStats()
	}
	prev := 1.0
	for _, p := range cfg.specProfile() {
		c := 0.0
		if prev > 0 {
			c = p / prev
		}
		e.specCond = append(e.specCond, c)
		prev = p
	}
	return e
}

func (e *engine) hasWork() bool { return len(e.running)+e.waiting.len() > 0 }

// load is the score vLLM's DP coordinator balances on: waiting requests weigh four times running.
func (e *engine) load() int { return 4*e.waiting.len() + len(e.running) }

func (e *engine) enqueue(r *request) {
	r.engine = e.idx
	e.waiting.pushBack(r)
	e.st.workerRequests++
	e.st.workerRequestBytes += float64(1050 + 6*r.promptLen)
}

// advanceTo runs every step that starts before t; the last one may end after t, as a real step
// in flight would.
func (e *engine) advanceTo(t float64) {
	for e.clock < t {
		if !e.hasWork() {
			e.clock = t
			return
		}
		if !e.step() {
			// Nothing schedulable although work is queued: requests waiting for their KV, whose arrival the clock
			// moves to; otherwise cannot happen with a validated config, but never spin.
			e.clock = min(t, max(e.clock+0.001, e.nextKVReady()))
		}
	}
}

// nextKVReady is when the first request still waiting for its pulled KV gets it; 0 when none waits.
func (e *engine) nextKVReady() float64 {
	next := 0.0
	for _, r := range e.running {
		if r.kvReady > e.clock && (next == 0 || r.kvReady < next) {
			next = r.kvReady
		}
	}
	return next
}

// step schedules one batch the way vLLM's V1 scheduler does, runs it, and applies its outputs.
func (e *engine) step() bool {
	t := e.clock
	e.sched = e.sched[:0]
	e.expireWaiting(t)
	budget, preempted := e.scheduleRunning(e.cfg.MaxNumBatchedTokens)
	if !preempted {
		// New and preempted requests are admitted only in steps without preemption, FCFS.
		e.admitWaiting(t, budget)
	}
	if len(e.sched) == 0 {
		return false
	}
	tEnd := t + e.stepDuration()
	if e.cfg.MFU {
		e.estimateWork()
	}
	iterPrompt, iterGen, firstITL := e.execute(tEnd)
	if e.finished {
		e.compactRunning()
		e.finished = false
	}
	e.clock = tEnd
	e.recordIteration(iterPrompt, iterGen, firstITL)
	return true
}

// scheduleRunning schedules the running requests first, in admission order, within the token budget; a request
// that cannot get KV blocks evicts the most recently admitted one (possibly itself), which goes back to the head
// of the queue. It returns the budget left and whether anything was preempted.
func (e *engine) scheduleRunning(budget int) (int, bool) {
	cfg := e.cfg
	preempted := false
	for i := 0; i < len(e.running); i++ {
		r := e.running[i]
		if r.kvReady > e.clock {
			continue // its KV is still arriving
		}
		var n int
		prefill := r.computed < r.prefillTarget
		if prefill {
			n = min(r.prefillTarget-r.computed, budget)
			if n == 0 {
				continue
			}
		} else {
			n = 1 + cfg.SpecTokens
			if n > budget {
				continue
			}
		}
		need := blocksFor(r.computed+n, cfg.BlockSize) - r.blocks
		self := false
		for need > e.kv.free() {
			victim := e.running[len(e.running)-1]
			e.running = e.running[:len(e.running)-1]
			e.preempt(victim)
			preempted = true
			if victim == r {
				self = true
				break
			}
		}
		if self {
			break
		}
		if need > 0 {
			e.kv.alloc(need)
			r.blocks += need
		}
		budget -= n
		e.sched = append(e.sched, scheduledWork{r: r, n: n, prefill: prefill})
	}
	return budget, preempted
}

// admitWaiting admits queued requests in order while sequences, budget and KV blocks allow, counting their
// prefix-cache (and KV-connector and multi-modal cache) lookups.
func (e *engine) admitWaiting(t float64, budget int) {
	cfg := e.cfg
	for e.waiting.len() > 0 && len(e.running) < cfg.MaxNumSeqs && budget > 0 {
		r := e.waiting.front()
		if !e.loraFits(r) {
			break // its adapter would exceed --max-loras: it waits until one finishes
		}
		hit := e.prefixHit(r)
		n := min(r.prefillTarget-hit, budget)
		need := blocksFor(hit+n, cfg.BlockSize)
		if !e.kv.alloc(need) {
			break
		}
		e.waiting.popFront()
		r.blocks = need
		r.computed = hit
		e.st.prefixQueries += float64(r.prefillTarget)
		e.st.prefixHits += float64(hit)
		if cfg.ExternalPrefixHitRate > 0 {
			miss := float64(r.prefillTarget - hit)
			e.st.externalQueries += miss
			hits := owe(&e.st.externalHits, &e.st.externalDue, miss*cfg.ExternalPrefixHitRate)
			if cfg.KVOffloadGB > 0 {
				e.offloadLoad(hits, miss)
			}
			if cfg.LMCache || cfg.LMCacheMP {
				e.lmcacheRetrieve(hits, miss)
			}
		}
		if r.scheduled < 0 {
			r.scheduled = t
			r.cachedFirst = hit
			if cfg.KVRole == KVRoleDecode {
				e.transfer(r, t, r.prefillTarget-hit)
			}
			if cfg.MMItems > 0 {
				e.st.mmQueries += float64(cfg.MMItems)
				e.st.mmHits, e.st.mmDue = owed(e.st.mmHits, e.st.mmDue, float64(cfg.MMItems)*cfg.MMHitRate)
			}
		}
		e.running = append(e.running, r)
		if r.kvReady > t {
			continue // it holds its blocks and waits for its KV; scheduleRunning takes it once the KV is in
		}
		budget -= n
		e.sched = append(e.sched, scheduledWork{r: r, n: n, prefill: true})
	}
}

// execute runs the scheduled batch, finishing at tEnd: prefills advance, completed prefills and decodes emit
// tokens. It returns the iteration's prompt and generated tokens and the first inter-token latency it saw (-1
// when none).
func (e *engine) execute(tEnd float64) (iterPrompt, iterGen int, firstITL float64) {
	firstITL = -1
	e.iterCached = 0
	for _, s := range e.sched {
		r := s.r
		if s.prefill {
			r.computed += s.n
			if r.computed < r.prefillTarget {
				continue
			}
			// The prefill is complete: the model samples the next token.
			if r.firstToken < 0 {
				iterPrompt += r.promptLen
				e.iterCached += r.cachedFirst + r.transferred
			}
			if itl := e.emit(r, 1, tEnd); itl >= 0 && firstITL < 0 {
				firstITL = itl
			}
			iterGen++
			continue
		}
		emitted := 1 + e.speculate()
		emitted = min(emitted, r.targetOut-r.generated)
		r.computed += emitted
		if itl := e.emit(r, emitted, tEnd); itl >= 0 && firstITL < 0 {
			firstITL = itl
		}
		iterGen += emitted
	}
	return iterPrompt, iterGen, firstITL
}

// recordIteration observes the iteration in vLLM's iteration histogram (from vllm.IterationTokensComputedSince
// the prompt tokens it computed, before all its prompts' tokens) and, with the profiler on, in the Ascend profiler's
// batch and token metrics.
func (e *engine) recordIteration(iterPrompt, iterGen int, firstITL float64) {
	tokens := iterPrompt + iterGen
	if rel := e.fleet.release; rel != "" && vllm.CompareReleases(rel, vllm.IterationTokensComputedSince) >= 0 {
		tokens -= e.iterCached
	}
	if tokens > 0 {
		e.st.iterTokens.observe(float64(tokens), 1)
	}
	a := e.asc
	if a == nil || !e.fleet.profiling {
		return
	}
	a.recorded = true
	a.batchSize.observe(float64(len(e.running)), 1)
	a.waitingBatchSize.observe(float64(e.waiting.len()), 1)
	if iterPrompt+iterGen > 0 {
		a.totalTokens.observe(float64(iterPrompt+iterGen), 1)
		// The tool's counters add 1 when an iteration has no tokens of that kind
		// (inc(value if value > 0 else 1)); the totals drift above the token counts.
		a.input += float64(max(iterPrompt, 1))
		a.output += float64(max(iterGen, 1))
		a.inputSeen, a.outputSeen = true, true
	}
	if firstITL >= 0 {
		a.secondTokenLatency.observe(firstITL, 1)
	}
}

// stepDuration is the model's cost for the scheduled batch, with a little noise.
func (e *engine) stepDuration() float64 {
	p := e.cfg.Perf
	prefillTokens, decodeSeqs, contextTokens := 0, 0, 0
	for _, s := range e.sched {
		if s.prefill {
			prefillTokens += s.n
		} else {
			decodeSeqs++
			contextTokens += s.r.computed
		}
	}
	ms := p.StepBaseMs + float64(decodeSeqs)*p.DecodePerSeqMs + float64(contextTokens)/1000*p.KVReadPerKTokenMs +
		float64(prefillTokens)*p.PrefillPerTokenMs
	if k := e.cfg.SpecTokens; k > 0 && decodeSeqs > 0 {
		ms += float64(k)*p.SpecDraftPerTokenMs + float64(decodeSeqs*k)*p.SpecVerifyPerTokMs
	}
	if p.Jitter > 0 {
		ms *= math.Exp(p.Jitter*e.rng.NormFloat64() - p.Jitter*p.Jitter/2)
	}
	return ms / 1000
}

// estimateWork adds one step's work to vLLM's per-GPU estimates the way --enable-mfu-metrics counts it: 2 FLOPs
// per parameter per token processed, the weights read once per step plus each sequence's KV context, and the new
// tokens' KV written. One GPU per engine.
func (e *engine) estimateWork() {
	tokens, context := 0, 0
	for _, s := range e.sched {
		tokens += s.n
		context += s.r.computed
	}
	st := e.st
	st.flops += 2 * modelParams * float64(tokens)
	st.readBytes += 2*modelParams + float64(context*kvBytesPerToken)
	st.writeBytes += float64(tokens * kvBytesPerToken)
}

// speculate runs one draft-and-verify round and returns how many draft tokens were accepted.
func (e *engine) speculate() int {
	k := len(e.specCond)
	if k == 0 {
		return 0
	}
	st := e.st
	st.specDrafts++
	st.specDraftTokens += float64(k)
	a := 0
	for a < k && e.rng.Float64() < e.specCond[a] {
		st.specAcceptedPerPos[a]++
		a++
	}
	st.specAccepted += float64(a)
	st.specEmitted += float64(a + 1)
	return a
}

// prefixHit is how many of the tokens to compute are already in the prefix cache, in whole
// blocks and never all of them: vLLM always recomputes at least the last token.
func (e *engine) prefixHit(r *request) int {
	rate := e.cfg.PrefixHitRate
	if rate == 0 {
		return 0
	}
	f := 0.5 // a preempted request finds about half of its own blocks not yet evicted
	if r.scheduled < 0 {
		f = math.Min(math.Max(rate+0.12*e.rng.NormFloat64(), 0), 0.95)
	}
	bs := e.cfg.BlockSize
	return int(f*float64(r.prefillTarget-1)) / bs * bs
}

// expireWaiting aborts queued requests whose client gave up before its first token. The queue
// is in arrival order apart from preempted requests at its head, so the scan stops at the first
// request still within its timeout.
func (e *engine) expireWaiting(t float64) {
	timeout := float64(e.cfg.ClientTimeout) / 1e9
	if timeout <= 0 {
		return
	}
	// Preempted requests that already streamed tokens stay; their clients are still reading.
	var keep []*request
	for e.waiting.len() > 0 {
		r := e.waiting.front()
		if r.firstToken >= 0 {
			keep = append(keep, e.waiting.popFront())
			continue
		}
		if t-r.arrival < timeout {
			break
		}
		e.waiting.popFront()
		if r.scheduled < 0 {
			r.scheduled = t
		}
		r.endReason, r.firstToken, r.lastToken = "abort", t, t
		e.finish(r, t)
	}
	for i := len(keep) - 1; i >= 0; i-- {
		e.waiting.pushFront(keep[i])
	}
}

// transfer pulls the KV of a request's missed prompt tokens from the prefill instance over NIXL, as a decode
// instance does when the request first arrives at t: its time grows with the prompt, the request waits for it, and
// then only the last prompt token is computed here; a failed transfer (the configured share, spread evenly) leaves
// the prompt to be computed here.
func (e *engine) transfer(r *request, t float64, tokens int) {
	if tokens <= 0 {
		return
	}
	st, cfg := e.st, e.cfg
	if owe(&st.nixlFailed, &st.nixlFailDue, cfg.KVTransferFailRate) > 0 {
		return // only successful transfers are timed, as the connector records them
	}
	secs := cfg.transferSeconds(tokens)
	st.nixlXfer.observe(secs, 1)
	st.nixlPost.observe(secs/50, 1)
	st.nixlBytes.observe(float64(tokens*kvBytesPerToken), 1)
	st.nixlDescriptors.observe(float64(blocksFor(tokens, cfg.BlockSize)), 1)
	r.transferred = tokens
	r.kvReady = t + secs
	r.computed = r.prefillTarget - 1
}

// observeResidency records a finished request's blocks: held since it was scheduled; then idle until the free
// pool has turned over once (the free blocks at the rate the used ones were allocated); and, when it hit the prefix
// cache, the time since the engine's previous hit reused cached blocks.
func (e *engine) observeResidency(r *request, t float64) {
	st := e.st
	lifetime := t - r.scheduled
	st.blockLifetime.observe(lifetime, 1)
	st.blockIdle.observe(math.Min(3600, lifetime*float64(e.kv.free())/float64(max(e.kv.used, 1))), 1)
	if r.cachedFirst > 0 {
		if st.lastHitAt > 0 {
			st.blockReuseGap.observe(r.scheduled-st.lastHitAt, 1)
		}
		st.lastHitAt = r.scheduled
	}
}

// loraFits reports whether a request's adapter can run: it already does, or fewer than MaxLoRA adapters do.
func (e *engine) loraFits(r *request) bool {
	if r.lora == "" {
		return true
	}
	running := e.loraRunning()
	return running[r.lora] || len(running) < e.cfg.MaxLoRA
}

// loraRunning is the set of adapters the running batch uses.
func (e *engine) loraRunning() map[string]bool {
	set := map[string]bool{}
	for _, r := range e.running {
		if r.lora != "" {
			set[r.lora] = true
		}
	}
	return set
}

// awaitingKV is the number of requests a decode instance is pulling KV for or prefilling what a transfer lacked: in
// vLLM they wait for the remote KV (WAITING_FOR_REMOTE_KVS), counted waiting and deferred rather than running.
func (e *engine) awaitingKV() int {
	if e.cfg.KVRole != KVRoleDecode {
		return 0
	}
	n := 0
	for _, r := range e.running {
		if r.kvReady > e.clock {
			n++
		}
	}
	return n
}

// lmcacheRetrieve counts one LMCache retrieval of a request's missed tokens, of which hit were found.
func (e *engine) lmcacheRetrieve(hit, requested float64) {
	st := e.st
	st.lmcacheRetrieves++
	if e.waiting.len() > 1 { // others queue behind this request: the multi-process server defers its retrieval
		st.lmcacheDeferred++
	}
	st.lmcacheRequested += requested
	st.lmcacheHit += hit
	st.lmcacheRetrieveTime.observe(0.001+hit*kvBytesPerToken/lmcacheBytesPerSecond, 1)
}

// offloadLoad loads the KV of hit tokens from the offloading connector's CPU memory, after a lookup over the
// missed tokens.
func (e *engine) offloadLoad(hit, looked float64) {
	st := e.st
	st.offloadLookup.observe(0.00005+looked*2e-8, 1)
	if hit <= 0 {
		return
	}
	bytes := hit * kvBytesPerToken
	st.offloadLoadBytes += bytes
	st.offloadLoadTime += bytes / offloadBytesPerSecond
	st.offloadLoadSize.observe(bytes, 1)
}

// offloadStore stores a finished request's KV in the offloading connector's CPU memory, oldest out when full; the
// configured share of stores fails to allocate.
func (e *engine) offloadStore(tokens int) {
	st, cfg := e.st, e.cfg
	st.offloadAllocation.observe(math.Ceil(float64(tokens)/float64(cfg.BlockSize)), 1)
	if owe(&st.offloadFailures, &st.offloadFailDue, cfg.KVOffloadFailRate) > 0 {
		return
	}
	bytes := float64(tokens * kvBytesPerToken)
	st.offloadStoreBytes += bytes
	st.offloadStoreTime += bytes / offloadBytesPerSecond
	st.offloadStoreSize.observe(bytes, 1)
	st.offloadResident = math.Min(cfg.KVOffloadGB*1e9, st.offloadResident+bytes)
}

func (e *engine) preempt(r *request) {
	e.kv.release(r.blocks)
	r.blocks, r.computed = 0, 0
	r.prefillTarget = r.promptLen + r.generated
	e.st.preemptions++
	e.waiting.pushFront(r)
}

// emit hands n new tokens of r to the API server at time t and returns the inter-token latency
// it recorded, or -1 for a first token.
func (e *engine) emit(r *request, n int, t float64) float64 {
	st := e.st
	f := e.fleet
	itl := -1.0
	if r.firstToken < 0 {
		r.firstToken = t
		ttft := t - r.arrival + e.cfg.Perf.APIOverheadMs/1000
		st.ttft.observe(ttft, 1)
		st.firstTokens++
		st.promptTokens += float64(r.promptLen)
		st.promptCacheHit += float64(r.cachedFirst)
		st.promptTransferred += float64(r.transferred)
		if e.asc != nil && f.profiling {
			e.asc.fineTTFT.observe(ttft, 1)
		}
		if fe := f.fe; fe != nil {
			fe.ttft.observe(ttft+0.002, 1)
			fe.cached.observe(float64(r.cachedFirst), 1)
			// The router predicts from its own index what the engine then finds: the same blocks, seen earlier.
			fe.routerHit.observe(ratio(float64(r.cachedFirst), float64(r.promptLen)), 1)
			fe.routed++
			l := &fe.last[e.idx]
			l.ttft, l.inputTokens, l.seenTTFT = ttft+0.002, float64(r.promptLen), true
		}
	} else {
		itl = t - r.lastToken
		st.itl.observe(itl, 1)
		if fe := f.fe; fe != nil {
			fe.itl.observe(itl, 1)
			fe.last[e.idx].itl, fe.last[e.idx].seenITL = itl, true
		}
	}
	r.lastToken = t
	r.generated += n
	st.generationTokens += float64(n)
	st.workerResponseBytes += float64(180 * n)
	if f.fe != nil {
		f.fe.outputTokens += float64(n)
	}
	if r.generated >= r.targetOut {
		e.finish(r, t)
	}
	return itl
}

func (e *engine) finish(r *request, t float64) {
	st := e.st
	e.kv.release(r.blocks)
	r.blocks = 0
	r.done = true
	e.finished = true

	reason := r.endReason
	if reason == "error" && !e.cfg.Flavor.hasErrorReason() {
		reason = "abort" // older versions have no FinishReason.ERROR
	}
	ovh := e.cfg.Perf.APIOverheadMs / 1000
	e2e := t - r.arrival + ovh
	decode := r.lastToken - r.firstToken
	tpot := 0.0
	if r.generated > 1 {
		tpot = decode / float64(r.generated-1)
	}
	st.success[reason]++
	owe(&st.corrupted, &st.corruptedDue, e.cfg.NaNLogitsRate)
	if e.cfg.KVCacheMetrics {
		e.observeResidency(r, t)
	}
	if e.cfg.KVRole == KVRolePrefill && reason == "length" {
	}
	if e.cfg.KVOffloadGB > 0 {
		e.offloadStore(r.promptLen + r.generated)
	}
	if e.cfg.LMCache || e.cfg.LMCacheMP {
		st.lmcacheStores++
		st.lmcacheStored += float64(r.promptLen)
	}
	st.e2e.observe(e2e, 1)
	st.queue.observe(r.scheduled-r.arrival, 1)
	st.prefill.observe(r.firstToken-r.scheduled, 1)
	st.decode.observe(decode, 1)
	st.inference.observe(r.lastToken-r.scheduled, 1)
	st.tpotRequest.observe(tpot, 1)
	st.reqPromptTokens.observe(float64(r.promptLen), 1)
	st.reqGenTokens.observe(float64(r.generated), 1)
	st.reqMaxGen.observe(float64(r.generated), 1)
	st.paramsMaxTokens.observe(float64(r.maxTokens), 1)
	st.paramsN.observe(1, 1)
	st.prefillKV.observe(float64(r.promptLen-r.cachedFirst), 1)
	st.workerDuration.observe(e2e, 1)
	st.httpDuration.observe(e2e, 1)

	f := e.fleet
	if a := e.asc; a != nil && f.profiling {
		a.fineTPOT.observe(tpot, 1)
		a.chatCompletion.observe(e2e+0.0008, 1)
	}
	if fe := f.fe; fe != nil {
		status := "success"
		if reason == "error" {
			status = "error"
		}
		kind := "unary"
		if r.stream {
			kind = "stream"
		}
		fe.requests[[2]string{kind, status}]++
		owe(&fe.migrations, &fe.migrationDue, e.cfg.MigrationRate)
		fe.duration.observe(e2e+0.003, 1)
		fe.isl.observe(float64(r.promptLen), 1)
		fe.osl.observe(float64(r.generated), 1)
	}
}

func (e *engine) compactRunning() {
	kept := e.running[:0]
	for _, r := range e.running {
		if !r.done {
			kept = append(kept, r)
		}
	}
	for i := len(kept); i < len(e.running); i++ {
		e.running[i] = nil
	}
	e.running = kept
}
