import type { DataSourceJsonData } from '@grafana/data';
import type { DataQuery } from '@grafana/schema';

import catalog from './catalog.json';
import type { DISCOVERY_TYPES, KUBERNETES_ROLES, MODE } from './settings.gen';
import {
  FIELD,
  Field,
  GROUP_BY as GROUP_BY_VALUE,
  GroupBy,
  Histogram,
  QUERY_TYPE,
  QueryType,
  Score,
} from './catalog.gen';

export type { Field, GroupBy, QueryType } from './catalog.gen';

/**
 * QUERY_TYPE_VALUES are the query types of the backend's measure catalog (pkg/measure), the same names in direct
 * and Prometheus mode, generated into catalog.gen.ts.
 */
export const QUERY_TYPE_VALUES = Object.values(QUERY_TYPE);

type Option = { value: string; label: string; description: string };

/** MeasureOption is one catalog entry: a measure of a query type, its outputs, the fields it reads, its servers. */
export interface MeasureOption extends Option {
  type: QueryType;
  default?: boolean;
  outputs: Array<{ name: string; unit: string; codes?: Array<{ value: number; name: string }> }>;
  flavors: string[];
  fields: Field[];
  required?: Field[];
  groupBy?: GroupBy[];
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

/** DEFAULT_METRIC is the latency family of a latency query without a metric. */
export const DEFAULT_METRIC = catalog.defaultMetric;

/** BALANCE_SCORES are the imbalance scores a dp_balance query's score field may pick. */
export const BALANCE_SCORES = catalog.scores as Score[];

/** FieldSpec is a query field's bounds and default (pkg/query FieldSpecs). */
export interface FieldSpec {
  name: Field;
  min?: number;
  max?: number;
  minExclusive?: boolean;
  maxItems?: number;
  maxBytes?: number;
  default?: unknown;
  values?: string[];
  settings?: boolean;
}

/** FIELD_SPECS are the query fields' bounds and defaults, by field. */
export const FIELD_SPECS = Object.fromEntries((catalog.fields as FieldSpec[]).map((f) => [f.name, f])) as Record<
  Field,
  FieldSpec
>;

/** GROUP_BY are the groupings with their English labels; the values come from the catalog. */
export const GROUP_BY: Array<{ value: GroupBy; label: string; description: string }> = [
  {
    value: GROUP_BY_VALUE.engine,
    label: 'Engine',
    description: 'One series per endpoint and engine / DP rank (default).',
  },
  { value: GROUP_BY_VALUE.endpoint, label: 'Endpoint', description: 'One series per endpoint.' },
  { value: GROUP_BY_VALUE.model, label: 'Model', description: 'One series per model across endpoints.' },
  { value: GROUP_BY_VALUE.fleet, label: 'Fleet', description: 'One series for everything selected.' },
  {
    value: GROUP_BY_VALUE.role,
    label: 'Role',
    description: 'One series per prefill/decode role (prefill, decode, both, unified).',
  },
];

export const DEFAULT_QUANTILES = FIELD_SPECS[FIELD.quantiles].default as number[];

/** ACCELERATORS are the peak presets of MFU queries (pkg/measure). */
export const ACCELERATORS: Array<{ value: string; label: string; tflops: number; tbps: number }> = catalog.accelerators;
export const DEFAULT_ACCELERATOR: string = catalog.defaultAccelerator;
export const DEFAULT_HEADROOM = FIELD_SPECS[FIELD.headroom].default as number;

/** selectedMeasures are the catalog entries a query returns: its measure, or its type's defaults. */
export function selectedMeasures(queryType: QueryType, measure?: string): MeasureOption[] {
  const m = MEASURES[queryType];
  if (!m) {
    return [];
  }
  return m.options.filter((o) => (measure ? o.value === measure : m.defaults.includes(o.value)));
}

/** QueryFields are the fields a query reads (the union over its measures), those it needs, and its groupings. */
export interface QueryFields {
  reads: (f: Field) => boolean;
  requires: (f: Field) => boolean;
  groupBy: GroupBy[];
}

/** queryFields reads from the catalog which fields the editor shows and checks for a query. */
export function queryFields(queryType: QueryType, measure?: string): QueryFields {
  const entries = selectedMeasures(queryType, measure);
  const reads = new Set(entries.flatMap((e) => e.fields));
  const required = new Set(entries.flatMap((e) => e.required ?? []));
  const groupBy = GROUP_BY.map((g) => g.value).filter((g) => entries.every((e) => e.groupBy?.includes(g)));
  return { reads: (f) => reads.has(f), requires: (f) => required.has(f), groupBy };
}

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
  /** buckets are the upper bounds of a distribution across the query's series (a heatmap's rows). */
  buckets?: number[];
  /** rank is one of the catalog's rank values (FIELD_SPECS.rank); empty ranks by the highest mean. */
  rank?: string;
  /** score restricts a dp_balance query to one imbalance score, without the per-rank loads. */
  score?: Score;
  /** output keeps one of the measure's outputs (by name), for alert rules. */
  output?: string;
  headroom?: number;
  /** threshold is the SLO target, in seconds, of a latency slo_attainment or goodput query. */
  threshold?: number;
  labels?: Record<string, string>;
  histogram?: Histogram;
  legendFormat?: string;
  /** expr is the PromQL expression of a `promql` query. */
  expr?: string;
}

export { REGEX_FIELDS } from './catalog.gen';

export const DEFAULT_QUERY: Partial<VllmQuery> = { queryType: QUERY_TYPE.kv_cache_usage };

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

/** Mode is where the data source reads metrics from (pkg/datasource Mode). */
export type Mode = (typeof MODE)[keyof typeof MODE];

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
  /** discovery lists the sources whose targets direct mode scrapes beside endpoints (pkg/discovery). */
  discovery?: DiscoverySource[];
  /** discoveryInterval is how often every discovery source is asked again. */
  discoveryInterval?: string;
  /** roleLabel is, in Prometheus mode, the label the server's relabel rules put each endpoint's role in. */
  roleLabel?: string;
  /** denyPartialResponse makes Prometheus mode fail a query rather than answer without a store that failed. */
  denyPartialResponse?: boolean;
  /** incrementalQuerying (unset: on) keeps range queries' steps older than incrementalQueryOverlapWindow between refreshes. */
  incrementalQuerying?: boolean;
  incrementalQueryOverlapWindow?: string;
  /** Standard Grafana HTTP settings used by Prometheus mode (and basic auth / TLS in direct mode). */
  oauthPassThru?: boolean;
  timeout?: number;
  httpMethod?: string;
}

/** DiscoveryType is a discovery source's kind (pkg/discovery Types). */
export type DiscoveryType = (typeof DISCOVERY_TYPES)[number];

/** KubernetesRole is what a kubernetes source follows (pkg/discovery KubernetesRoles); unset is pod. */
export type KubernetesRole = (typeof KUBERNETES_ROLES)[number];

/** DiscoveryMatch is one keep or drop rule: the label's whole value matches the regex. */
export interface DiscoveryMatch {
  label: string;
  regex: string;
}

/** DiscoverySource is one discovery source as jsonData holds it (pkg/discovery Source). */
export interface DiscoverySource {
  type: DiscoveryType;
  name?: string;
  dnsName?: string;
  recordType?: string;
  dnsServer?: string;
  port?: number;
  kubernetesRole?: KubernetesRole;
  namespaces?: string[];
  labelSelector?: string;
  portName?: string;
  kubeconfig?: string;
  apiServer?: string;
  url?: string;
  path?: string;
  scheme?: string;
  metricsPath?: string;
  nameTemplate?: string;
  keep?: DiscoveryMatch[];
  drop?: DiscoveryMatch[];
  roleLabel?: string;
  modelLabel?: string;
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
  /** gone says discovery no longer lists the endpoint: not scraped, not down, its history kept. */
  gone?: boolean;
  goneSince?: string;
  /** source is the discovery source that found the endpoint; role and model what its labels say. */
  source?: string;
  role?: string;
  model?: string;
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
