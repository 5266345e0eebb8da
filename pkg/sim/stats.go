package sim

import (
	"math"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

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
	// The offloading connector's: bytes and seconds moved each way, failed allocations, bytes held in CPU memory.
	offloadLoadBytes, offloadLoadTime, offloadStoreBytes, offloadStoreTime float64
	offloadFailures, offloadFailDue, offloadResident                       float64
	offloadLoadSize, offloadStoreSize, offloadLookup                       *histogram
	offloadAsyncLookup, offloadAllocation                                  *histogram
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
	// The API server's time per HTTP request (prometheus-fastapi-instrumentator).
	httpDuration *histogram
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

// newEngineStats builds an engine's histograms with the bounds bounds gives each vLLM family name (the release's,
// or the flavor's own def).
func newEngineStats(f Flavor, maxModelLen, specTokens int, bounds func(name string, def []float64) []float64) *engineStats {
	h := func(name string, def []float64) *histogram { return newHistogram(bounds(name, def)) }
	ttft, itl, lat, iter := bucketsTTFTv1, bucketsITLv1, bucketsRequestLatencyV1, bucketsIterationTokensV1
	itlName := "vllm:inter_token_latency_seconds"
	if f.isV0() {
		ttft, itl, lat, iter = bucketsTTFTv0, bucketsTPOTv0, bucketsRequestLatencyV0, bucketsIterationTokensV0
		itlName = "vllm:time_per_output_token_seconds"
	}
	tok := bounds("vllm:request_prompt_tokens", vllm.Buckets125(maxModelLen))
	return &engineStats{
		success:             map[string]float64{},
		specAcceptedPerPos:  make([]float64, specTokens),
		reqPromptTokens:     newHistogram(tok),
		reqGenTokens:        h("vllm:request_generation_tokens", tok),
		reqMaxGen:           h("vllm:request_max_num_generation_tokens", tok),
		paramsMaxTokens:     h("vllm:request_params_max_tokens", tok),
		prefillKV:           h("vllm:request_prefill_kv_computed_tokens", tok),
		paramsN:             h("vllm:request_params_n", vllm.BucketsParamsN),
		tpotRequest:         h("vllm:request_time_per_output_token_seconds", bucketsITLv1),
		workerDuration:      newHistogram(bucketsRustDefault),
		httpDuration:        newHistogram(bucketsHTTPDuration),
		nixlXfer:            h("vllm:nixl_xfer_time_seconds", vllm.BucketsNixlXfer),
		nixlPost:            h("vllm:nixl_post_time_seconds", vllm.BucketsNixlPost),
		nixlBytes:           h("vllm:nixl_bytes_transferred", vllm.BucketsNixlBytes),
		nixlDescriptors:     h("vllm:nixl_num_descriptors", vllm.BucketsNixlDescriptors),
		offloadLoadSize:     h("vllm:kv_offload_load_size", vllm.BucketsOffloadSize),
		offloadStoreSize:    h("vllm:kv_offload_store_size", vllm.BucketsOffloadSize),
		offloadLookup:       h("vllm:kv_offload_lookup_sync_delay_seconds", vllm.BucketsOffloadLookupSync),
		offloadAsyncLookup:  h("vllm:kv_offload_lookup_async_delay_seconds", vllm.BucketsOffloadLookupAsync),
		offloadAllocation:   h("vllm:kv_offload_cpu_allocation_size", vllm.BucketsOffloadAllocation),
		lmcacheRetrieveTime: newHistogram(bucketsLMCacheRetrieve),
		blockLifetime:       h("vllm:kv_block_lifetime_seconds", vllm.BucketsKVResidency),
		blockIdle:           h("vllm:kv_block_idle_before_evict_seconds", vllm.BucketsKVResidency),
		blockReuseGap:       h("vllm:kv_block_reuse_gap_seconds", vllm.BucketsKVResidency),
		ttft:                h("vllm:time_to_first_token_seconds", ttft),
		itl:                 h(itlName, itl),
		iterTokens:          h("vllm:iteration_tokens_total", iter),
		e2e:                 h("vllm:e2e_request_latency_seconds", lat),
		queue:               h("vllm:request_queue_time_seconds", lat),
		inference:           h("vllm:request_inference_time_seconds", lat),
		prefill:             h("vllm:request_prefill_time_seconds", lat),
		decode:              h("vllm:request_decode_time_seconds", lat),
	}
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
