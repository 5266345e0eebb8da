import { DataSourceJsonData } from '@grafana/data';
import { DataQuery } from '@grafana/schema';

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
  | 'raw';

export const QUERY_TYPES: Array<{ value: QueryType; label: string; description: string }> = [
  { value: 'kv_cache_usage', label: 'KV-cache usage', description: 'Percent of the KV-cache pool in use, per engine or DP rank.' },
  { value: 'spec_decode', label: 'Speculative decoding', description: 'Draft acceptance rate and mean acceptance length.' },
  { value: 'dp_balance', label: 'DP balance', description: 'Per-rank load across data-parallel engines and an imbalance score.' },
  { value: 'latency', label: 'Latency', description: 'Quantiles of TTFT, inter-token latency, end-to-end and queue time.' },
  { value: 'throughput', label: 'Throughput', description: 'Prompt and generation tokens per second, requests per second.' },
  { value: 'queue', label: 'Queue', description: 'Running, waiting and swapped requests.' },
  { value: 'cache', label: 'Cache', description: 'Preemptions per second and prefix-cache hit rate.' },
  { value: 'capacity', label: 'Capacity', description: 'Concurrent requests the KV pool can hold, with headroom.' },
  { value: 'raw', label: 'Raw metric', description: 'Any metric family by name, with label filters.' },
];

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
  groupBy?: 'engine' | 'endpoint' | 'model' | 'fleet';
  headroom?: number;
  labels?: Record<string, string>;
  histogram?: 'buckets' | 'quantiles';
  legendFormat?: string;
}

/** Fields holding regular expressions; multi-value variables expand into them as (a|b). */
export const REGEX_FIELDS = ['endpoint', 'model', 'engine'] as const;

export const DEFAULT_QUERY: Partial<VllmQuery> = { queryType: 'kv_cache_usage' };

/** VariableResource names the backend resources template variables can list. */
export type VariableResource = 'models' | 'engines' | 'endpoints' | 'metrics';

/** VariableQuery is a template variable's query: which resource to list. */
export interface VariableQuery {
  queryType: 'variable';
  resource: VariableResource;
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
}
