import type { DataSourceJsonData } from '@grafana/data';
import type { DataQuery } from '@grafana/schema';

/** QueryType names what the backend computes; the same names work in direct and Prometheus mode. */
export type QueryType =
  | 'kv_cache_usage'
  | 'spec_decode'
  | 'dp_balance'
  | 'latency'
  | 'throughput'
  | 'queue'
  | 'cache'
  | 'capacity'
  | 'raw'
  | 'promql';

export const QUERY_TYPES: Array<{ value: QueryType; label: string; description: string }> = [
  {
    value: 'kv_cache_usage',
    label: 'KV-cache usage',
    description: 'Percent of the KV-cache pool in use, per engine or DP rank.',
  },
  {
    value: 'spec_decode',
    label: 'Speculative decoding',
    description: 'Draft acceptance rate and mean acceptance length.',
  },
  {
    value: 'dp_balance',
    label: 'DP balance',
    description: 'Per-rank load across data-parallel engines and an imbalance score.',
  },
  {
    value: 'latency',
    label: 'Latency',
    description: 'Quantiles of TTFT, inter-token latency, end-to-end and queue time.',
  },
  {
    value: 'throughput',
    label: 'Throughput',
    description: 'Prompt and generation tokens per second, requests per second.',
  },
  { value: 'queue', label: 'Queue', description: 'Running, waiting and swapped requests.' },
  { value: 'cache', label: 'Cache', description: 'Preemptions per second and prefix-cache hit rate.' },
  { value: 'capacity', label: 'Capacity', description: 'Concurrent requests the KV pool can hold, with headroom.' },
  { value: 'raw', label: 'Raw metric', description: 'Any metric family by name, with label filters.' },
  {
    value: 'promql',
    label: 'PromQL',
    description: 'A PromQL expression sent as is to the Prometheus server (Prometheus mode only).',
  },
];

type Option = { value: string; label: string; description: string };

/** MEASURES mirrors pkg/query/model.go's Measures: what each query type can return; `defaults` are the outputs of an empty measure. */
export const MEASURES: Partial<Record<QueryType, { options: Option[]; defaults: string[] }>> = {
  kv_cache_usage: {
    defaults: ['usage'],
    options: [
      { value: 'usage', label: 'Usage %', description: 'Share of the KV-cache pool in use, 0–100.' },
      { value: 'blocks', label: 'Blocks', description: 'Total, free and allocated KV blocks where exposed.' },
    ],
  },
  spec_decode: {
    defaults: ['acceptance_rate', 'acceptance_length'],
    options: [
      { value: 'acceptance_rate', label: 'Acceptance rate', description: 'Accepted ÷ draft tokens over the window.' },
      {
        value: 'acceptance_length',
        label: 'Acceptance length',
        description: '1 + accepted tokens ÷ drafts over the window.',
      },
      { value: 'per_position', label: 'Per position', description: 'Acceptance rate per draft position.' },
      {
        value: 'num_spec_tokens',
        label: 'Speculative tokens',
        description: 'Configured speculative tokens (vLLM-Ascend).',
      },
      { value: 'efficiency', label: 'Efficiency', description: "V0's system efficiency gauge." },
    ],
  },
  dp_balance: {
    defaults: ['running'],
    options: [
      { value: 'running', label: 'Running', description: 'Rank load = running requests.' },
      { value: 'waiting', label: 'Waiting', description: 'Rank load = waiting requests.' },
      {
        value: 'running_waiting',
        label: 'Running + waiting',
        description: 'Rank load = running plus waiting requests.',
      },
      { value: 'kv_usage', label: 'KV usage', description: 'Rank load = KV-cache usage %.' },
      {
        value: 'generation_tps',
        label: 'Generation tokens/s',
        description: 'Rank load = generation tokens per second.',
      },
    ],
  },
  latency: {
    defaults: ['quantiles'],
    options: [
      { value: 'quantiles', label: 'Quantiles', description: 'histogram_quantile over the window for each quantile.' },
      { value: 'mean', label: 'Mean', description: 'Sum ÷ count over the window.' },
    ],
  },
  throughput: {
    defaults: ['prompt_tokens', 'generation_tokens'],
    options: [
      { value: 'generation_tokens', label: 'Generation tokens/s', description: 'Output tokens per second.' },
      { value: 'prompt_tokens', label: 'Prompt tokens/s', description: 'Input tokens per second.' },
      { value: 'requests', label: 'Requests/s', description: 'Finished requests per second by finished_reason.' },
      {
        value: 'ascend_input',
        label: 'Ascend input tokens/s',
        description: 'vLLM-Ascend profiler input tokens per second.',
      },
      {
        value: 'ascend_output',
        label: 'Ascend output tokens/s',
        description: 'vLLM-Ascend profiler output tokens per second.',
      },
    ],
  },
  queue: {
    defaults: ['running', 'waiting', 'swapped'],
    options: [
      { value: 'running', label: 'Running', description: 'Requests being processed.' },
      { value: 'waiting', label: 'Waiting', description: 'Requests waiting to be scheduled.' },
      { value: 'waiting_by_reason', label: 'Waiting by reason', description: 'Waiting requests split by reason.' },
      { value: 'swapped', label: 'Swapped', description: 'Requests swapped to CPU (V0).' },
      { value: 'ascend_batch_size', label: 'Ascend batch size', description: 'Average batch size over the window.' },
      {
        value: 'ascend_waiting_batch_size',
        label: 'Ascend waiting batch size',
        description: 'Average waiting batch size over the window.',
      },
    ],
  },
  cache: {
    defaults: ['preemptions', 'prefix_hit_rate'],
    options: [
      { value: 'preemptions', label: 'Preemptions/s', description: 'Scheduler preemptions per second.' },
      { value: 'prefix_hit_rate', label: 'Prefix-cache hit rate', description: 'Hits ÷ queries over the window.' },
      {
        value: 'external_prefix_hit_rate',
        label: 'External prefix-cache hit rate',
        description: 'KV connector hits ÷ queries.',
      },
      { value: 'mm_hit_rate', label: 'Multi-modal cache hit rate', description: 'Multi-modal cache hits ÷ queries.' },
    ],
  },
};

/** LATENCY_METRICS are the latency families pkg/query/model.go knows; `timer:<histogram>` picks an Ascend profiler timer. */
export const LATENCY_METRICS: Option[] = [
  { value: 'ttft', label: 'Time to first token', description: 'vllm:time_to_first_token_seconds' },
  {
    value: 'itl',
    label: 'Inter-token latency',
    description: 'vllm:inter_token_latency_seconds (or time_per_output_token)',
  },
  {
    value: 'tpot',
    label: 'Time per output token',
    description: 'Same family as inter-token latency, under its old name.',
  },
  {
    value: 'request_tpot',
    label: 'Request time per output token',
    description: 'vllm:request_time_per_output_token_seconds',
  },
  { value: 'e2e', label: 'End-to-end latency', description: 'vllm:e2e_request_latency_seconds' },
  { value: 'queue', label: 'Queue time', description: 'vllm:request_queue_time_seconds' },
  { value: 'prefill', label: 'Prefill time', description: 'vllm:request_prefill_time_seconds' },
  { value: 'decode', label: 'Decode time', description: 'vllm:request_decode_time_seconds' },
  { value: 'inference', label: 'Inference time', description: 'vllm:request_inference_time_seconds' },
  { value: 'ascend_fine_ttft', label: 'Ascend fine TTFT', description: 'vLLM-Ascend profiler fine-grained TTFT.' },
  { value: 'ascend_fine_tpot', label: 'Ascend fine TPOT', description: 'vLLM-Ascend profiler fine-grained TPOT.' },
  {
    value: 'ascend_second_token',
    label: 'Ascend second token',
    description: 'vLLM-Ascend profiler second-token latency.',
  },
  { value: 'ascend_batch_size', label: 'Ascend batch size', description: 'vLLM-Ascend profiler batch size histogram.' },
  {
    value: 'ascend_waiting_batch_size',
    label: 'Ascend waiting batch size',
    description: 'vLLM-Ascend waiting batch size histogram.',
  },
  {
    value: 'ascend_total_tokens',
    label: 'Ascend total tokens',
    description: 'vLLM-Ascend profiler total tokens histogram.',
  },
];

/** TIMER_PREFIX marks a latency metric that names an Ascend profiler histogram. */
export const TIMER_PREFIX = 'timer:';

export type GroupBy = 'engine' | 'endpoint' | 'model' | 'fleet';

export const GROUP_BY: Array<{ value: GroupBy; label: string; description: string }> = [
  { value: 'engine', label: 'Engine', description: 'One series per endpoint and engine / DP rank (default).' },
  { value: 'endpoint', label: 'Endpoint', description: 'One series per endpoint.' },
  { value: 'model', label: 'Model', description: 'One series per model across endpoints.' },
  { value: 'fleet', label: 'Fleet', description: 'One series for everything selected.' },
];

export const DEFAULT_QUANTILES = [0.5, 0.9, 0.95, 0.99];
export const DEFAULT_HEADROOM = 0.3;

/** TypeFields says which optional fields a query type uses, so the editor shows only those. */
export interface TypeFields {
  filters: boolean;
  groupBy: boolean;
  window: boolean;
  latency: boolean;
  headroom: boolean;
  raw: boolean;
  promql: boolean;
}

const base: TypeFields = {
  filters: true,
  groupBy: true,
  window: true,
  latency: false,
  headroom: false,
  raw: false,
  promql: false,
};

/** TYPE_FIELDS lists each query type's fields. */
export const TYPE_FIELDS: Record<QueryType, TypeFields> = {
  kv_cache_usage: { ...base, window: false },
  spec_decode: base,
  dp_balance: base,
  latency: { ...base, latency: true },
  throughput: base,
  queue: base,
  cache: base,
  capacity: { ...base, headroom: true },
  raw: { ...base, raw: true },
  promql: { ...base, filters: false, groupBy: false, window: false, promql: true },
};

/** VllmQuery mirrors the backend's query model (pkg/query/model.go; documented in the README). */
export interface VllmQuery extends DataQuery {
  queryType?: QueryType;
  endpoint?: string;
  model?: string;
  engine?: string;
  measure?: string;
  metric?: string;
  quantiles?: number[];
  window?: string;
  groupBy?: GroupBy;
  headroom?: number;
  labels?: Record<string, string>;
  histogram?: 'buckets' | 'quantiles';
  legendFormat?: string;
  /** expr is the PromQL expression of a `promql` query. */
  expr?: string;
}

/** Fields holding regular expressions; multi-value variables expand into them as (a|b). */
export const REGEX_FIELDS = ['endpoint', 'model', 'engine'] as const;

export const DEFAULT_QUERY: Partial<VllmQuery> = { queryType: 'kv_cache_usage' };

/** VariableResource names the backend resources template variables can list. */
export type VariableResource = 'models' | 'engines' | 'endpoints' | 'metrics' | 'label-values';

export const VARIABLE_RESOURCES: Array<{ value: VariableResource; label: string; description: string }> = [
  { value: 'models', label: 'Models', description: 'model_name values seen on the endpoints.' },
  { value: 'endpoints', label: 'Endpoints', description: 'Configured endpoint names.' },
  { value: 'engines', label: 'Engines / DP ranks', description: 'engine, dp or dp_rank label values.' },
  { value: 'metrics', label: 'Metric names', description: 'vLLM, vLLM-Ascend and Dynamo metric names.' },
  { value: 'label-values', label: 'Label values', description: 'Values of one label, across all series.' },
];

/** VariableQuery is a template variable's query: which resource to list (and, for label-values, which label). */
export interface VariableQuery extends DataQuery {
  queryType: 'variable';
  resource: VariableResource;
  /** label is the label whose values `label-values` lists. */
  label?: string;
}

export type Mode = 'direct' | 'prometheus';

export interface Endpoint {
  url: string;
  name?: string;
}

/** VllmOptions is the data source's jsonData; the Go side reads the same fields (pkg/datasource/settings.go). */
export interface VllmOptions extends DataSourceJsonData {
  mode?: Mode;
  endpoints?: Endpoint[];
  scrapeInterval?: string;
  scrapeTimeout?: string;
  retention?: string;
  maxMemoryMB?: number;
  maxBodyMB?: number;
  maxSamples?: number;
  /** allowLinkLocalTargets lets endpoints and the server URL be link-local or cloud-metadata addresses. */
  allowLinkLocalTargets?: boolean;
  /** Standard Grafana HTTP settings used by Prometheus mode (and basic auth / TLS in direct mode). */
  oauthPassThru?: boolean;
  timeout?: number;
  httpMethod?: string;
}

/** VllmSecureOptions is the data source's secureJsonData; only its "configured" flags come back to the browser. */
export interface VllmSecureOptions {
  bearerToken?: string;
  basicAuthPassword?: string;
}

/** EndpointStatus is one entry of the `endpoints` resource (direct mode adds the last scrape's status). */
export interface EndpointStatus {
  name: string;
  url: string;
  up?: boolean;
  error?: string;
  lastScrape?: string;
  samples?: number;
  detection?: Detection;
}

/** Detection is what the backend recognised on an endpoint (pkg/vllm Detection). */
export interface Detection {
  flavor: string;
  deprecatedNames?: boolean;
  ranks?: string[];
  rankLabel?: string;
  specDecode?: boolean;
  ascendProfiler?: boolean;
  pidLabel?: boolean;
}

/** ProbeResult is the answer of POST resources/probe. */
export interface ProbeResult {
  up: boolean;
  error?: string;
  samples?: number;
  detection?: Detection;
}
