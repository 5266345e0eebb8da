import ascendDashboard from '../../../dashboards/ascend-per-dp.json';
import minimalDashboard from '../../../dashboards/vllm-minimal.json';
import { FAMILY, GROUP_BY, MEASURE, QUERY_TYPE, RAW_METRIC, SCORE } from '../../datasource/catalog.gen';
import type { VllmQuery } from '../../datasource/types';

// The queries the app's pages send, built here so the fleet table, the drill-downs and their tests agree. Every
// target is a data-source query (no second path to the data); where a page shows a shipped dashboard's panel, it
// reads the panel from the dashboard's JSON (dashboardPanel), so the two cannot drift apart.

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
    { refId: FLEET_REFS.up, queryType: QUERY_TYPE.raw, metric: RAW_METRIC.up },
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
    dashboardPanel(minimalDashboard, 1, 'latency', { ...g, ...q }),
    dashboardPanel(minimalDashboard, 2, 'throughput', { ...g, ...q }),
    dashboardPanel(minimalDashboard, 3, 'queue', { ...g, ...q }),
    dashboardPanel(minimalDashboard, 4, 'kv', { ...g, ...q }),
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
  return [
    dashboardPanel(ascendDashboard, 3, 'ascend-kv', q),
    dashboardPanel(ascendDashboard, 6, 'ascend-batch', q),
    dashboardPanel(ascendDashboard, 10, 'ascend-tokens', q),
    dashboardPanel(ascendDashboard, 13, 'ascend-ttft', q),
  ];
}

/** Dashboard is the part of a shipped dashboard's JSON the pages read. */
interface Dashboard {
  uid: string;
  panels: Array<{
    id: number;
    fieldConfig?: { defaults?: { unit?: string } };
    targets?: Array<Record<string, unknown>>;
    panels?: Dashboard['panels'];
  }>;
}

/**
 * dashboardPanel is the dashboard panel with the given id as a page panel: its unit and targets, without the
 * dashboard's data source and variables ($endpoint, …), narrowed instead by the page's fields. An id the dashboard
 * lacks is a programming error (the scenes test reads every page).
 */
export function dashboardPanel(d: Dashboard, panelId: number, id: string, fields: Partial<VllmQuery>): PanelSpec {
  const panel = d.panels.flatMap((p) => [p, ...(p.panels ?? [])]).find((p) => p.id === panelId);
  if (!panel?.targets) {
    throw new Error(`dashboard ${d.uid} has no panel ${panelId} with queries`);
  }
  const targets = panel.targets.map((t) => {
    const own = Object.entries(t).filter(
      ([k, v]) => k !== 'datasource' && !(typeof v === 'string' && v.startsWith('$'))
    );
    return { ...(Object.fromEntries(own) as Target), ...fields };
  });
  return { id, unit: panel.fieldConfig?.defaults?.unit, targets };
}

/** diagnosisTarget is the findings table's query for the selection. */
export function diagnosisTarget(f: Filter): Target {
  return { refId: 'A', queryType: QUERY_TYPE.diagnosis, ...filtered(f) };
}
