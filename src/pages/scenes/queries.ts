import { FAMILY, GROUP_BY, MEASURE, QUERY_TYPE, SCORE } from '../../datasource/catalog.gen';
import type { VllmQuery } from '../../datasource/types';

// The queries the app's pages send, built here so the fleet table, the drill-downs and their tests agree. Every
// target is a data-source query (no second path to the data); targets are the shipped dashboards' own.

/** DS_VARIABLE is the name of the pages' data-source variable (URL key var-ds). */
export const DS_VARIABLE = 'ds';

/** DS_REF points a query runner at the data source the variable selects. */
export const DS_REF = { type: 'inferscope-vllm-datasource', uid: `$${DS_VARIABLE}` };

type Target = Omit<VllmQuery, 'refId'> & { refId: string };

/**
 * FLEET_REFS name the fleet table's targets; the joiner (join.ts) reads each by refId. KV usage stays per
 * engine so the table shows the busiest rank and counts the ranks; the rest are grouped by endpoint.
 */
export const FLEET_REFS = {
  state: 'state',
  up: 'up',
  kv: 'kv',
  running: 'running',
  waiting: 'waiting',
  ttft: 'ttft',
  generation: 'generation',
  imbalance: 'imbalance',
  acceptance: 'acceptance',
  diagnosis: 'diagnosis',
} as const;

/** Filter narrows a page's queries to one endpoint or one model (regular expressions, anchored by the backend). */
export interface Filter {
  endpoint?: string;
  model?: string;
}

/** escape quotes a name for the regex-valued endpoint and model fields. */
export function escape(name: string): string {
  return name.replace(/[\\^$*+?.()|[\]{}]/g, '\\$&');
}

function filtered(f: Filter): Partial<VllmQuery> {
  return {
    ...(f.endpoint !== undefined ? { endpoint: escape(f.endpoint) } : {}),
    ...(f.model !== undefined ? { model: escape(f.model) } : {}),
  };
}

/** fleetTargets are the fleet table's targets, one QueryData round trip for every endpoint (or model). */
export function fleetTargets(groupBy: typeof GROUP_BY.endpoint | typeof GROUP_BY.model = GROUP_BY.endpoint): Target[] {
  const g = { groupBy };
  return [
    { refId: FLEET_REFS.state, queryType: QUERY_TYPE.engine_state, ...g },
    { refId: FLEET_REFS.up, queryType: QUERY_TYPE.raw, metric: 'up' },
    { refId: FLEET_REFS.kv, queryType: QUERY_TYPE.kv_cache_usage },
    { refId: FLEET_REFS.running, queryType: QUERY_TYPE.queue, measure: MEASURE.queue.running, ...g },
    { refId: FLEET_REFS.waiting, queryType: QUERY_TYPE.queue, measure: MEASURE.queue.waiting, ...g },
    {
      refId: FLEET_REFS.ttft,
      queryType: QUERY_TYPE.latency,
      metric: FAMILY.ttft,
      quantiles: [0.95],
      window: '5m',
      ...g,
    },
    {
      refId: FLEET_REFS.generation,
      queryType: QUERY_TYPE.throughput,
      measure: MEASURE.throughput.generation_tokens,
      window: '1m',
      ...g,
    },
    {
      refId: FLEET_REFS.imbalance,
      queryType: QUERY_TYPE.dp_balance,
      measure: MEASURE.dp_balance.running_waiting,
      score: SCORE.max_over_mean,
      ...g,
    },
    {
      refId: FLEET_REFS.acceptance,
      queryType: QUERY_TYPE.spec_decode,
      measure: MEASURE.spec_decode.acceptance_rate,
      window: '5m',
      ...g,
    },
    { refId: FLEET_REFS.diagnosis, queryType: QUERY_TYPE.diagnosis },
  ];
}

/** PanelSpec is one drill-down panel: its title key and English text, unit and targets. */
export interface PanelSpec {
  id: string;
  unit?: string;
  targets: Target[];
}

/**
 * detailPanels are the endpoint and model pages' time-series panels: the minimal dashboard's four, then DP balance,
 * spec decode per position and the cache, each narrowed to the selection. Series are per engine on an endpoint's
 * page and per endpoint on a model's page.
 */
export function detailPanels(f: Filter): PanelSpec[] {
  const by = f.endpoint !== undefined ? '{{engine}}{{dp}}' : '{{endpoint}}';
  const g: Partial<VllmQuery> = f.endpoint !== undefined ? {} : { groupBy: GROUP_BY.endpoint };
  const q = filtered(f);
  return [
    {
      id: 'latency',
      unit: 's',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.latency,
          metric: FAMILY.ttft,
          quantiles: [0.95],
          window: '5m',
          legendFormat: `TTFT p95 ${by}`,
          ...g,
          ...q,
        },
        {
          refId: 'B',
          queryType: QUERY_TYPE.latency,
          metric: FAMILY.tpot,
          quantiles: [0.95],
          window: '5m',
          legendFormat: `TPOT p95 ${by}`,
          ...g,
          ...q,
        },
      ],
    },
    {
      id: 'throughput',
      unit: 'short',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.throughput,
          measure: MEASURE.throughput.generation_tokens,
          window: '1m',
          legendFormat: by,
          ...g,
          ...q,
        },
      ],
    },
    {
      id: 'queue',
      unit: 'short',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.queue,
          measure: MEASURE.queue.running,
          legendFormat: `running ${by}`,
          ...g,
          ...q,
        },
        {
          refId: 'B',
          queryType: QUERY_TYPE.queue,
          measure: MEASURE.queue.waiting,
          legendFormat: `waiting ${by}`,
          ...g,
          ...q,
        },
      ],
    },
    {
      id: 'kv',
      unit: 'percent',
      targets: [
        { refId: 'A', queryType: QUERY_TYPE.kv_cache_usage, legendFormat: `KV usage ${by}`, ...g, ...q },
        {
          refId: 'B',
          queryType: QUERY_TYPE.cache,
          measure: MEASURE.cache.preemptions,
          window: '5m',
          legendFormat: `preemptions/s ${by}`,
          ...g,
          ...q,
        },
      ],
    },
    {
      id: 'dp-balance',
      unit: 'short',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.dp_balance,
          measure: MEASURE.dp_balance.running_waiting,
          score: SCORE.max_over_mean,
          groupBy: GROUP_BY.endpoint,
          legendFormat: 'max/mean {{endpoint}}',
          ...q,
        },
        {
          refId: 'B',
          queryType: QUERY_TYPE.dp_balance,
          measure: MEASURE.dp_balance.running_waiting,
          score: SCORE.idle_while_waiting,
          groupBy: GROUP_BY.endpoint,
          legendFormat: 'idle ranks while others wait {{endpoint}}',
          ...q,
        },
      ],
    },
    {
      id: 'spec-decode',
      unit: 'percentunit',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.spec_decode,
          measure: MEASURE.spec_decode.per_position,
          window: '5m',
          ...g,
          ...q,
        },
      ],
    },
    {
      id: 'cache',
      unit: 'percentunit',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.cache,
          measure: MEASURE.cache.prefix_hit_rate,
          window: '5m',
          legendFormat: `prefix hits ${by}`,
          ...g,
          ...q,
        },
      ],
    },
  ];
}

/** ascendPanels are the per-DP-rank views of dashboards/ascend-per-dp.json for one endpoint. */
export function ascendPanels(endpoint: string): PanelSpec[] {
  const q = { endpoint: escape(endpoint) };
  const dp = 'dp {{dp}}';
  return [
    {
      id: 'ascend-kv',
      unit: 'percent',
      targets: [{ refId: 'A', queryType: QUERY_TYPE.kv_cache_usage, legendFormat: dp, ...q }],
    },
    {
      id: 'ascend-batch',
      unit: 'short',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.queue,
          measure: MEASURE.queue.ascend_batch_size,
          legendFormat: `avg ${dp}`,
          ...q,
        },
        {
          refId: 'B',
          queryType: QUERY_TYPE.latency,
          metric: FAMILY.ascend_batch_size,
          quantiles: [0.99],
          legendFormat: `p99 ${dp}`,
          ...q,
        },
      ],
    },
    {
      id: 'ascend-tokens',
      unit: 'short',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.throughput,
          measure: MEASURE.throughput.ascend_input,
          legendFormat: `input ${dp}`,
          ...q,
        },
        {
          refId: 'B',
          queryType: QUERY_TYPE.throughput,
          measure: MEASURE.throughput.ascend_output,
          legendFormat: `output ${dp}`,
          ...q,
        },
      ],
    },
    {
      id: 'ascend-ttft',
      unit: 's',
      targets: [
        {
          refId: 'A',
          queryType: QUERY_TYPE.latency,
          metric: FAMILY.ascend_fine_ttft,
          quantiles: [0.5, 0.99],
          legendFormat: `p{{quantile}} ${dp}`,
          ...q,
        },
      ],
    },
  ];
}

/** diagnosisTarget is the findings table's query for the selection. */
export function diagnosisTarget(f: Filter): Target {
  return { refId: 'A', queryType: QUERY_TYPE.diagnosis, ...filtered(f) };
}
