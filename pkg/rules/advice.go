package rules

// Advice is what a symptom likely means and the knob an operator turns, after the troubleshooting table the
// diagnosis, the alert rules' knob annotations and the runbooks all read.
type Advice struct {
	Cause string
	Knob  string
}

// The advice, one per symptom.
var (
	AdviceEndpointDown = Advice{
		Cause: "the server is down or unreachable, rejects the credentials, or does not answer with a metrics exposition",
		Knob:  "check the vLLM process and its /metrics port; the data source's Save & test shows each endpoint's error"}
	AdviceEngineUnhealthy = Advice{
		Cause: "the engine core died or hung; vLLM's fault tolerance routes around it while it recovers",
		Knob:  "read the engine core's log; if it does not recover, restart the instance (the other engines keep serving)"}
	AdviceEngineAsleep = Advice{
		Cause: "the engine was put to sleep (POST /sleep) and holds no weights or KV cache on the GPU; it serves nothing until woken",
		Knob:  "POST /wake_up before sending it traffic; leave it asleep if it is parked on purpose"}
	AdviceWaiting = Advice{
		Cause: "prefill cannot keep up: long prompts block the scheduler or the deployment is out of capacity",
		Knob:  "enable --enable-chunked-prefill; lower --max-model-len if prompts allow; add replicas"}
	AdviceWedged = Advice{
		Cause: "the engine core stopped scheduling (a hung worker, a stuck collective, a dead GPU) while the API server still queues requests",
		Knob:  "restart the engine; read the engine core and worker logs for NCCL timeouts or CUDA errors (vLLM's /health fails once the core is dead)"}
	AdviceTTFTBurn = Advice{
		Cause: "against a 99 % objective the error budget burns 14.4 times too fast: requests queue or prefills are slow",
		Knob:  "check the waiting queue and KV usage; add replicas, enable --enable-chunked-prefill or shed load"}
	AdviceErrors = Advice{
		Cause: "requests end with finished_reason error (the server failed them) or abort (clients gave up, often on slow first tokens)",
		Knob:  "read the server log for the errors; when aborts dominate, compare TTFT with the clients' timeouts"}
	AdviceKVFull = Advice{
		Cause: "the KV pool is too small for the running batch, so requests are evicted and recomputed",
		Knob:  "lower --max-num-seqs, or use --kv-cache-dtype fp8 (quantize weights first if memory is tight)"}
	AdvicePreemptions = Advice{
		Cause: "the running batch outgrows the KV pool, so the scheduler evicts requests and recomputes them later",
		Knob:  "lower --max-num-seqs or --max-num-batched-tokens, or free KV memory (--kv-cache-dtype fp8)"}
	AdviceSwapped = Advice{
		Cause: "the GPU KV pool is too small; swap only buys time and costs recomputation",
		Knob:  "add GPU memory or lower concurrency (--max-num-seqs); --swap-space only absorbs short peaks"}
	AdviceSlowTTFT = Advice{
		Cause: "prefills wait behind other work or run unchunked",
		Knob:  "enable --enable-chunked-prefill and raise --max-num-batched-tokens; check the queue"}
	AdviceExtremeTTFT = Advice{
		Cause: "requests queue for seconds behind a full batch, very long prompts are prefilled unchunked, or the instance is preempting",
		Knob:  "add replicas or shed load; enable --enable-chunked-prefill and cap prompts with --max-model-len; check KV usage and preemptions"}
	AdvicePrefixHits = Advice{
		Cause: "prefix caching is off, or traffic does not reuse prompts (multi-turn chat should)",
		Knob:  "enable --enable-prefix-caching; route a conversation's turns to the same replica"}
	AdviceDPIdle = Advice{
		Cause: "the data-parallel router sends most requests to a few ranks (vllm-project/vllm#48808)",
		Knob:  "check the DP load-balancing policy of the router / API servers; spread traffic across ranks"}
	AdviceKVTransferFailing = Advice{
		Cause: "the prefill instance's KV could not be read (side channel, UCX transport or expired KV), so the prompt is recomputed and time to first token rises",
		Knob:  "check the NIXL side channel and UCX transport between prefill and decode; look for kv_expired requests on the prefill side"}
	AdviceKVTransferSlow = Advice{
		Cause: "the link between prefill and decode is slow (TCP instead of RDMA, a distant NIC) or transfers are many small blocks",
		Knob:  "move the transfer to RDMA and check NIC placement; larger --block-size means fewer descriptors per transfer"}
	AdviceOffloadFailing = Advice{
		Cause: "the offloading connector finds no room for new KV, so KV that could be reused is dropped and its prompts are recomputed",
		Knob:  "give offloading more memory (--kv-offloading-size) or offload less"}
	AdviceOffloadThrash = Advice{
		Cause: "transfers in flight hold nearly every CPU block, so new stores find no free or evictable room and KV that could be reused is not kept",
		Knob:  "give offloading more memory (--kv-offloading-size); check the prompt-token sources for how much the offload tier serves"}
	AdviceLMCacheMisses = Advice{
		Cause: "LMCache evicts before reuse, its remote backend is unreachable, or the router no longer sends a conversation to the same replica",
		Knob:  "check LMCache's local cache size and eviction (max_local_cpu_size), whether a remote backend is reachable, and the router's session affinity"}
	AdviceShortOutputs = Advice{
		Cause: "clients send a small max_tokens, so each request ends after a few tokens and prefill dominates the work: generation throughput stays low while the batch looks full",
		Knob:  "check the clients' max_tokens; batch work that needs long outputs differently from short classification calls"}
	AdviceSpecAcceptance = Advice{
		Cause: "the draft model or n-gram proposer predicts the target poorly, wasting compute",
		Knob:  "lower num_speculative_tokens or use a better-matched draft model"}
	AdviceSpecCollapse = Advice{
		Cause: "the traffic changed (another language, task or prompt template) or the draft model no longer matches the target after a deployment, so most drafted tokens are thrown away",
		Knob:  "compare acceptance by draft position; lower num_speculative_tokens, switch to a better-matched draft, or turn speculation off (--speculative-config) until it is fixed"}
	AdviceCorrupted = Advice{
		Cause: "logits with NaNs come from broken weights or quantization, a failing GPU (XID, ECC) or a kernel or driver regression",
		Knob:  "check the model weights and quantization, the GPU (XID errors, ECC) and recent kernel or driver changes; drain the engine until it is found"}
	AdviceDecodeKVFull = Advice{
		Cause: "the decode instances hold every running request's KV for its whole generation: too few decode instances for the traffic, or outputs grew longer",
		Knob:  "add decode instances or move capacity from prefill to decode; lower --max-num-seqs on decode, or use --kv-cache-dtype fp8"}
	AdvicePrefillQueue = Advice{
		Cause: "the prefill instances cannot keep up with the prompts: too few prefill instances, longer prompts, or a prefill instance blocked sending KV",
		Knob:  "add prefill instances or move capacity from decode to prefill; raise --max-num-batched-tokens; check the KV transfer time beside it"}
	AdviceDynamoQueued = Advice{
		Cause: "the frontend receives more requests than its workers take: too few workers, workers slowed by full KV caches or long prompts, or the KV router holding requests back",
		Knob:  "add decode (or aggregated) workers or let Dynamo's planner scale them; check the workers' KV usage and TTFT; a lower frontend concurrency limit sheds load earlier"}
	AdviceHTTP5xx = Advice{
		Cause: "the API server answers requests with 5xx: the engine failed them (finished_reason error), it is overloaded or restarting, or a request crashed the engine core",
		Knob:  "read the API server's log for the failing requests; compare with the failed-request share and the engine state; a rising share with an unhealthy engine needs a restart"}
	AdviceNoBackend = Advice{
		Cause: "every replica of the model crashed, was evicted or lost its network, or all were put to sleep (POST /sleep) and none woken, so a router has nowhere to send its requests",
		Knob:  "wake a sleeping replica (POST /wake_up) or restart the failed ones; check the pods' events and the engine logs, and keep at least one replica of each model awake"}
	AdvicePDImbalance = Advice{
		Cause: "the prefill side is short of capacity for the prompts (too few prefill instances, longer prompts) or blocked handing KV over, while the decode side idles",
		Knob:  "add prefill instances or move capacity from decode to prefill (the llm-d or Dynamo replica counts and their autoscaler); raise --max-num-batched-tokens on prefill; check the KV transfer time"}
	AdviceMigrations = Advice{
		Cause: "Dynamo's workers go away mid-request (crashes, evictions, restarts or a rolling update), so the frontend moves their requests to other workers",
		Knob:  "find the workers that restarted (their pods' restarts and logs); during a rolling update drain workers before stopping them"}
)
