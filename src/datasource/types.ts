import type { DataSourceJsonData } from '@grafana/data';
import type { DataQuery } from '@grafana/schema';

import catalog from './catalog.json';

/**
 * QUERY_TYPE_VALUES are the query types of the backend's measure catalog (pkg/measure), the same names in direct
 * and Prometheus mode; a test fails when this list and src/datasource/catalog.json disagree.
 */
export const QUERY_TYPE_VALUES = [
  'kv_cache_usage',
  'spec_decode',
  'dp_balance',
  'latency',
  'throughput',
  'queue',
  'cache',
  'capacity',
  'engine_state',
  'mfu',
  'lora',
  'kv_transfer',
  'kv_offload',
  'lmcache',
  'prompt_sources',
  'raw',
  'diagnosis',
  'promql',
] as const;

/** QueryType names what the backend computes. */
export type QueryType = (typeof QUERY_TYPE_VALUES)[number];

type Option = { value: string; label: string; description: string };

/** MeasureOption is one catalog entry: a measure of a query type, its outputs and the servers that have it. */
export interface MeasureOption extends Option {
  type: QueryType;
  default?: boolean;
  outputs: Array<{ name: string; unit: string }>;
  flavors: string[];
}

/** QUERY_TYPES are the query types in the editor's order, from the catalog. */
export const QUERY_TYPES = catalog.types as Array<{ value: QueryType; label: string; description: string }>;

/** MEASURES are what each query type can return, from the catalog; `defaults` are the outputs of an empty measure. */
export const MEASURES = catalog.measures as unknown as Record<
  QueryType,
  { options: MeasureOption[]; defaults: string[] }
>;

/** LATENCY_METRICS are the latency families; `timer:<histogram>` picks an Ascend profiler timer. */
export const LATENCY_METRICS: Option[] = catalog.latencyMetrics;

/** TIMER_PREFIX marks a latency metric that names an Ascend profiler histogram. */
export const TIMER_PREFIX = catalog.timerPrefix;

/** BALANCE_SCORES are the imbalance scores a dp_balance query's score field may pick. */
export const BALANCE_SCORES = catalog.scores;

export type GroupBy = 'engine' | 'endpoint' | 'model' | 'fleet' | 'role';

export const GROUP_BY: Array<{ value: GroupBy; label: string; description: string }> = [
  { value: 'engine', label: 'Engine', description: 'One series per endpoint and engine / DP rank (default).' },
  { value: 'endpoint', label: 'Endpoint', description: 'One series per endpoint.' },
  { value: 'model', label: 'Model', description: 'One series per model across endpoints.' },
  { value: 'fleet', label: 'Fleet', description: 'One series for everything selected.' },
  { value: 'role', label: 'Role', description: 'One series per prefill/decode role (prefill, decode, both, unified).' },
];

export const DEFAULT_QUANTILES: number[] = catalog.defaultQuantiles;

/** ACCELERATORS are the peak presets of MFU queries (pkg/measure); MAX_PEAK bounds a custom peak. */
export const ACCELERATORS: Array<{ value: string; label: string; tflops: number; tbps: number }> = catalog.accelerators;
export const DEFAULT_ACCELERATOR: string = catalog.defaultAccelerator;
export const MAX_PEAK: number = catalog.maxPeak;
export const DEFAULT_HEADROOM: number = catalog.defaultHeadroom;

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
  kv_transfer: base,
  kv_offload: base,
  lmcache: base,
  prompt_sources: base,
  engine_state: { ...base, window: false },
  lora: { ...base, window: false },
  mfu: base,
  raw: { ...base, raw: true },
  diagnosis: { ...base, groupBy: false, window: false },
  promql: { ...base, filters: false, groupBy: false, window: false, promql: true },
};

/** VllmQuery mirrors the backend's query model (pkg/query/model.go; documented in the README). */
export interface VllmQuery extends DataQuery {
  queryType?: QueryType;
  endpoint?: string;
  model?: string;
  engine?: string;
  /** role is a regex over the endpoints' prefill/decode roles; set (even to .*), series carry a role label. */
  role?: string;
  measure?: string;
  metric?: string;
  quantiles?: number[];
  window?: string;
  groupBy?: GroupBy;
  /** limit keeps that many series per output: the highest mean over the range, or the lowest with rank 'lowest'. */
  limit?: number;
  rank?: 'highest' | 'lowest';
  /** score restricts a dp_balance query to one imbalance score, without the per-rank loads. */
  score?: string;
  headroom?: number;
  /** threshold is the SLO target, in seconds, of a latency slo_attainment query. */
  threshold?: number;
  labels?: Record<string, string>;
  histogram?: 'buckets' | 'quantiles';
  legendFormat?: string;
  /** expr is the PromQL expression of a `promql` query. */
  expr?: string;
}

/** Fields holding regular expressions; multi-value variables expand into them as (a|b). */
export const REGEX_FIELDS = ['endpoint', 'model', 'engine', 'role'] as const;

export const DEFAULT_QUERY: Partial<VllmQuery> = { queryType: 'kv_cache_usage' };

/** VariableResource names the backend resources template variables can list. */
export type VariableResource = 'models' | 'engines' | 'endpoints' | 'roles' | 'metrics' | 'label-values';

export const VARIABLE_RESOURCES: Array<{ value: VariableResource; label: string; description: string }> = [
  { value: 'models', label: 'Models', description: 'model_name values seen on the endpoints.' },
  { value: 'endpoints', label: 'Endpoints', description: 'Configured endpoint names.' },
  { value: 'engines', label: 'Engines / DP ranks', description: 'engine, dp or dp_rank label values.' },
  {
    value: 'roles',
    label: 'Prefill/decode roles',
    description: 'Roles the endpoints show now: prefill, decode, both, unified or undetermined.',
  },
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
  /** accelerator names the peak preset MFU queries divide by; peakTflops and peakMemoryTBps replace its peaks. */
  accelerator?: string;
  peakTflops?: number;
  peakMemoryTBps?: number;
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

/**
 * EndpointStatus is one entry of the `endpoints` resource and of a health check's details (pkg/datasource
 * EndpointHealth); Prometheus mode lists names only.
 */
export interface EndpointStatus {
  name: string;
  url?: string;
  up?: boolean;
  error?: string;
  lastScrape?: string;
  samples?: number;
  detection?: Detection;
  /** version is the vLLM release the endpoint's /version answered (direct mode, vLLM's API server only). */
  version?: string;
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
