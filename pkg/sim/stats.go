package sim

import "math"

// engineStats is everything one engine has counted since start; the exposition reads it.
type engineStats struct {
	prefixQueries, prefixHits float64
	// The KV connector's and the multi-modal cache's lookups; the *Due fields carry the fractional hits owed, so
	// the hit counters stay whole numbers at exactly the configured share.
	externalQueries, externalHits, externalDue float64
	mmQueries, mmHits, mmDue                   float64
	preemptions                                float64
	promptTokens                               float64 // counted when the first token is out, as vLLM does
	promptCacheHit                             float64 // the local_cache_hit share of promptTokens
	promptTransferred                          float64 // the external_kv_transfer share of promptTokens
	// The NIXL connector's view on a decode instance: one transfer per request's missed prompt KV.
	nixlXfer, nixlPost, nixlBytes, nixlDescriptors *histogram
	nixlFailed, nixlFailDue                        float64
	// KV block residency (--kv-cache-metrics), one observation per finished request for its blocks: how long they
	// were held, how long they then sit idle before eviction, and the time since cached blocks were last used.
	blockLifetime, blockIdle, blockReuseGap *histogram
	lastHitAt                               float64
	// Requests with NaNs in their logits (VLLM_COMPUTE_NANS_IN_LOGITS) and the share owed.
	corrupted, corruptedDue float64
	// vLLM's per-GPU work estimates (--enable-mfu-metrics).
	flops, readBytes, writeBytes float64
	// sendsDue are when the decode instance will have read the KV a prefill instance holds for finished requests.
	sendsDue []float64
	// The offloading connector's: bytes and seconds moved each way, failed allocations, bytes held in CPU memory.
	offloadLoadBytes, offloadLoadTime, offloadStoreBytes, offloadStoreTime float64
	offloadFailures, offloadFailDue, offloadResident                       float64
	offloadLoadSize, offloadStoreSize, offloadLookup                       *histogram
	// LMCache's own counters of the same connector lookups, and the stores of finished prompts.
	lmcacheRetrieves, lmcacheRequested, lmcacheHit, lmcacheStores, lmcacheStored float64
	lmcacheDeferred                                                              float64 // multi-process mode
	lmcacheRetrieveTime                                                          *histogram
	generationTokens                                                             float64
	success                                                                      map[string]float64 // by finished_reason
	firstTokens                                                                  float64

	specDrafts, specDraftTokens, specAccepted, specEmitted float64
	specAcceptedPerPos                                     []float64

	reqPromptTokens, reqGenTokens, iterTokens, reqMaxGen, paramsN, paramsMaxTokens *histogram
	ttft, itl, tpotRequest, e2e, queue, inference, prefill, decode, prefillKV      *histogram

	// The Dynamo worker's own view of the same requests.
	workerRequests, workerRequestBytes, workerResponseBytes float64
	workerDuration                                          *histogram
}

// owed adds a fractional number of hits to a whole-number counter: the whole part now, the rest carried.
func owed(hits, due, add float64) (float64, float64) {
	due += add
	whole := math.Floor(due)
	return hits + whole, due - whole
}

// owe is owed on a counter and its carry in place, returning the whole part added now: the hits a lookup found, or
// 1 when this operation is one of the configured share that fails.
func owe(count, due *float64, add float64) float64 {
	before := *count
	*count, *due = owed(*count, *due, add)
	return *count - before
}

func newEngineStats(f Flavor, maxModelLen, specTokens int) *engineStats {
	tok := buckets125(maxModelLen)
	s := &engineStats{
		success:             map[string]float64{},
		specAcceptedPerPos:  make([]float64, specTokens),
		reqPromptTokens:     newHistogram(tok),
		reqGenTokens:        newHistogram(tok),
		reqMaxGen:           newHistogram(tok),
		paramsMaxTokens:     newHistogram(tok),
		prefillKV:           newHistogram(tok),
		paramsN:             newHistogram(bucketsParamsN),
		tpotRequest:         newHistogram(bucketsITLv1),
		workerDuration:      newHistogram(bucketsRustDefault),
		nixlXfer:            newHistogram(bucketsNixlXfer),
		nixlPost:            newHistogram(bucketsNixlPost),
		nixlBytes:           newHistogram(bucketsNixlBytes),
		nixlDescriptors:     newHistogram(bucketsNixlDescriptors),
		offloadLoadSize:     newHistogram(bucketsOffloadSize),
		offloadStoreSize:    newHistogram(bucketsOffloadSize),
		offloadLookup:       newHistogram(bucketsOffloadLookup),
		lmcacheRetrieveTime: newHistogram(bucketsLMCacheRetrieve),
		blockLifetime:       newHistogram(bucketsKVResidency),
		blockIdle:           newHistogram(bucketsKVResidency),
		blockReuseGap:       newHistogram(bucketsKVResidency),
	}
	ttft, itl, lat, iter := bucketsTTFTv1, bucketsITLv1, bucketsRequestLatencyV1, bucketsIterationTokensV1
	if f.isV0() {
		ttft, itl, lat, iter = bucketsTTFTv0, bucketsTPOTv0, bucketsRequestLatencyV0, bucketsIterationTokensV0
	}
	s.ttft, s.itl, s.iterTokens = newHistogram(ttft), newHistogram(itl), newHistogram(iter)
	s.e2e, s.queue, s.inference = newHistogram(lat), newHistogram(lat), newHistogram(lat)
	s.prefill, s.decode = newHistogram(lat), newHistogram(lat)
	return s
}

// ascendStats is what msServiceProfiler's hooks record for one DP rank. A family only shows up
// once it has been recorded, as the tool registers metrics lazily.
type ascendStats struct {
	recorded                        bool
	batchSize, waitingBatchSize     *histogram
	totalTokens, secondTokenLatency *histogram
	fineTTFT, fineTPOT              *histogram
	input, output                   float64
	inputSeen, outputSeen           bool
	chatCompletion                  *histogram // server:create_chat_completion:duration, in the API server (dp=-1)
}

func newAscendStats() *ascendStats {
	return &ascendStats{
		batchSize:          newHistogram(bucketsAscendBatch),
		waitingBatchSize:   newHistogram(bucketsAscendBatch),
		totalTokens:        newHistogram(bucketsIterationTokensV1),
		secondTokenLatency: newHistogram(bucketsITLv1),
		fineTTFT:           newHistogram(bucketsAscendTimer),
		fineTPOT:           newHistogram(bucketsAscendTimer),
		chatCompletion:     newHistogram(bucketsAscendTimer),
	}
}

// frontendStats is Dynamo's frontend view of the whole fleet, its KV router's included.
type frontendStats struct {
	requests     map[[2]string]float64 // {request_type, status}
	outputTokens float64
	ttft, itl    *histogram
	duration     *histogram
	isl, osl     *histogram
	cached       *histogram // prompt tokens found in the prefix cache, per request
	routerHit    *histogram // the KV hit rate the router predicted, per request
	routed       float64    // requests the router placed
	migrations   float64
	migrationDue float64
	last         []workerLast // per engine (the worker's DP rank)
}

// workerLast is what the frontend last saw of one worker rank: the per-worker gauges it exports.
type workerLast struct {
	ttft, inputTokens float64
	itl               float64
	seenTTFT, seenITL bool
}

func newFrontendStats(engines int) *frontendStats {
	return &frontendStats{
		requests:  map[[2]string]float64{},
		ttft:      newHistogram(bucketsDynamoTTFT),
		itl:       newHistogram(bucketsDynamoITL),
		duration:  newHistogram(bucketsDynamoDuration),
		isl:       newHistogram(bucketsDynamoISL),
		osl:       newHistogram(bucketsDynamoOSL),
		cached:    newHistogram(bucketsDynamoISL),
		routerHit: newHistogram(bucketsHitRate),
		last:      make([]workerLast, engines),
	}
}
