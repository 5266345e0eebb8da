// Generated from pkg/measure and pkg/query by `go test ./pkg/query -run Catalog -update-catalog`; do not edit.

/** QUERY_TYPE names each query type (pkg/measure Types), in the editor's order. */
export const QUERY_TYPE = {
  kv_cache_usage: 'kv_cache_usage',
  spec_decode: 'spec_decode',
  dp_balance: 'dp_balance',
  latency: 'latency',
  throughput: 'throughput',
  queue: 'queue',
  cache: 'cache',
  capacity: 'capacity',
  engine_state: 'engine_state',
  mfu: 'mfu',
  lora: 'lora',
  kv_transfer: 'kv_transfer',
  kv_offload: 'kv_offload',
  lmcache: 'lmcache',
  prompt_sources: 'prompt_sources',
  raw: 'raw',
  diagnosis: 'diagnosis',
  promql: 'promql',
} as const;

/** MEASURE names each query type's measures, in catalog order. */
export const MEASURE = {
  kv_cache_usage: {
    usage: 'usage',
    blocks: 'blocks',
  },
  spec_decode: {
    acceptance_rate: 'acceptance_rate',
    acceptance_length: 'acceptance_length',
    per_position: 'per_position',
    num_spec_tokens: 'num_spec_tokens',
    efficiency: 'efficiency',
  },
  dp_balance: {
    running: 'running',
    waiting: 'waiting',
    running_waiting: 'running_waiting',
    kv_usage: 'kv_usage',
    generation_tps: 'generation_tps',
    router_decode_blocks: 'router_decode_blocks',
  },
  latency: {
    quantiles: 'quantiles',
    slo_attainment: 'slo_attainment',
    goodput: 'goodput',
    mean: 'mean',
  },
  throughput: {
    prompt_tokens: 'prompt_tokens',
    generation_tokens: 'generation_tokens',
    requests: 'requests',
    errors: 'errors',
    finish_share: 'finish_share',
    tokens_per_request: 'tokens_per_request',
    length_buckets: 'length_buckets',
    step_tokens: 'step_tokens',
    request_params: 'request_params',
    corrupted: 'corrupted',
    migrations: 'migrations',
    dynamo_components: 'dynamo_components',
    dynamo_worker_latency: 'dynamo_worker_latency',
    api_http: 'api_http',
    ascend_input: 'ascend_input',
    ascend_output: 'ascend_output',
  },
  queue: {
    running: 'running',
    waiting: 'waiting',
    swapped: 'swapped',
    waiting_by_reason: 'waiting_by_reason',
    deferred: 'deferred',
    frontend: 'frontend',
    ascend_batch_size: 'ascend_batch_size',
    ascend_waiting_batch_size: 'ascend_waiting_batch_size',
  },
  cache: {
    preemptions: 'preemptions',
    prefix_hit_rate: 'prefix_hit_rate',
    external_prefix_hit_rate: 'external_prefix_hit_rate',
    mm_hit_rate: 'mm_hit_rate',
    kv_routing: 'kv_routing',
    residency: 'residency',
  },
  capacity: {
    capacity: 'capacity',
  },
  engine_state: {
    state: 'state',
    serving: 'serving',
    api_process: 'api_process',
    sleep_operations: 'sleep_operations',
  },
  mfu: {
    utilization: 'utilization',
    achieved: 'achieved',
  },
  lora: {
    adapters: 'adapters',
    by_adapter: 'by_adapter',
  },
  kv_transfer: {
    latency: 'latency',
    throughput: 'throughput',
    failures: 'failures',
    expired: 'expired',
    descriptors: 'descriptors',
    post_time: 'post_time',
    pd_ttft: 'pd_ttft',
    pd_balance: 'pd_balance',
  },
  kv_offload: {
    bandwidth: 'bandwidth',
    copy_speed: 'copy_speed',
    failures: 'failures',
    cpu_usage: 'cpu_usage',
    lookup_delay: 'lookup_delay',
  },
  lmcache: {
    hit_rate: 'hit_rate',
    requests: 'requests',
    retrieve_time: 'retrieve_time',
    multi_process: 'multi_process',
  },
  prompt_sources: {
    by_source: 'by_source',
    cached: 'cached',
    cached_by_tier: 'cached_by_tier',
    prefill_computed: 'prefill_computed',
  },
  raw: {
    series: 'series',
  },
  diagnosis: {
    findings: 'findings',
  },
  promql: {
    series: 'series',
  },
} as const;

/** FIELD names the query fields a measure may read (catalog entries' fields). */
export const FIELD = {
  endpoint: 'endpoint',
  model: 'model',
  engine: 'engine',
  role: 'role',
  groupBy: 'groupBy',
  limit: 'limit',
  rank: 'rank',
  buckets: 'buckets',
  family: 'family',
  metric: 'metric',
  labels: 'labels',
  histogram: 'histogram',
  quantiles: 'quantiles',
  threshold: 'threshold',
  headroom: 'headroom',
  score: 'score',
  output: 'output',
  window: 'window',
  expr: 'expr',
  peakTflops: 'peakTflops',
  peakMemoryTBps: 'peakMemoryTBps',
} as const;

/** REGEX_FIELDS are the fields holding regular expressions; multi-value variables expand into them as (a|b). */
export const REGEX_FIELDS = ['endpoint', 'model', 'engine', 'role'] as const;

/** GROUP_BY names the groupBy values. */
export const GROUP_BY = {
  engine: 'engine',
  endpoint: 'endpoint',
  model: 'model',
  fleet: 'fleet',
  role: 'role',
} as const;

/** FAMILY names the latency families. */
export const FAMILY = {
  ttft: 'ttft',
  itl: 'itl',
  tpot: 'tpot',
  request_tpot: 'request_tpot',
  e2e: 'e2e',
  queue: 'queue',
  prefill: 'prefill',
  decode: 'decode',
  inference: 'inference',
  ascend_fine_ttft: 'ascend_fine_ttft',
  ascend_fine_tpot: 'ascend_fine_tpot',
  ascend_second_token: 'ascend_second_token',
  ascend_batch_size: 'ascend_batch_size',
  ascend_waiting_batch_size: 'ascend_waiting_batch_size',
  ascend_total_tokens: 'ascend_total_tokens',
} as const;

/** SCORE names the dp_balance imbalance scores. */
export const SCORE = {
  max_over_mean: 'max_over_mean',
  cv: 'cv',
  idle_while_waiting: 'idle_while_waiting',
} as const;

/** RAW_METRIC names the metrics raw queries read besides vLLM's own: the scrape's up. */
export const RAW_METRIC = {
  up: 'up',
} as const;

/** HISTOGRAM names how a raw histogram is returned. */
export const HISTOGRAM = {
  buckets: 'buckets',
  quantiles: 'quantiles',
} as const;

/** ENGINE_STATE is engine_state's value for each state. */
export const ENGINE_STATE = {
  online: 3,
  asleep: 2,
  unhealthy: 1,
} as const;

/** LORA_STATE is lora/by_adapter's value for each adapter state. */
export const LORA_STATE = {
  running: 2,
  waiting: 1,
} as const;

/** QueryType names what the backend computes. */
export type QueryType = (typeof QUERY_TYPE)[keyof typeof QUERY_TYPE];

/** MeasureName is a measure of query type T. */
export type MeasureName<T extends QueryType = QueryType> = T extends QueryType
  ? (typeof MEASURE)[T][keyof (typeof MEASURE)[T]]
  : never;

/** Field is a query field a measure reads. */
export type Field = (typeof FIELD)[keyof typeof FIELD];

/** GroupBy says how series are aggregated. */
export type GroupBy = (typeof GROUP_BY)[keyof typeof GROUP_BY];

/** Score is a dp_balance imbalance score. */
export type Score = (typeof SCORE)[keyof typeof SCORE];

/** Histogram is how a raw histogram is returned. */
export type Histogram = (typeof HISTOGRAM)[keyof typeof HISTOGRAM];
