import { DataFrame, Field, FieldSparkline, FieldType } from '@grafana/data';
import { ENGINE_STATE } from '../../datasource/catalog.gen';
import { FLEET_REFS } from './queries';

/**
 * State is an endpoint's (or model's) condition: engine_state's lowest engine, down when its scrape fails, or gone
 * when discovery no longer lists it (scaled away: not scraped, not down, its history kept).
 */
export type State = 'up' | 'sleeping' | 'unhealthy' | 'down' | 'gone' | 'unknown';

/** FleetRow is one row of the fleet table; numbers are the newest values, undefined where nothing answered. */
export interface FleetRow {
  name: string;
  state: State;
  engines: number;
  kv?: number;
  running?: number;
  waiting?: number;
  ttft?: number;
  generation?: number;
  imbalance?: number;
  acceptance?: number;
  findings: number;
  /** models (on endpoint rows) or endpoints (on model rows) seen in the series. */
  related: string[];
  /** dpRanks: the KV series are labelled dp, as only vLLM-Ascend's profiler metrics are. */
  dpRanks: boolean;
  kvTrend?: FieldSparkline;
  generationTrend?: FieldSparkline;
}

type Key = 'endpoint' | 'model';
const LABEL: Record<Key, string> = { endpoint: 'endpoint', model: 'model_name' };
const ENGINE_STATES: Record<number, State> = {
  [ENGINE_STATE.online]: 'up',
  [ENGINE_STATE.asleep]: 'sleeping',
  [ENGINE_STATE.unhealthy]: 'unhealthy',
};
/** STATE_ORDER ranks states worst first, the fleet table's default order. */
export const STATE_ORDER: State[] = ['down', 'unhealthy', 'sleeping', 'up', 'gone', 'unknown'];

function valueField(frame: DataFrame): Field | undefined {
  return frame.fields.find((f) => f.type === FieldType.number);
}

function lastValue(field: Field): number | undefined {
  for (let i = field.values.length - 1; i >= 0; i--) {
    const v = field.values[i];
    if (v !== null && v !== undefined && !Number.isNaN(v)) {
      return v;
    }
  }
  return undefined;
}

/** trend is a series as a sparkline; Sparkline scales by the field's range, which raw frames do not carry. */
function trend(frame: DataFrame, field: Field): FieldSparkline {
  const values = field.values.filter((v): v is number => typeof v === 'number' && !Number.isNaN(v));
  const min = values.length ? Math.min(...values) : 0;
  const max = values.length ? Math.max(...values) : 0;
  const y = { ...field, state: { ...field.state, range: { min, max, delta: max - min } } };
  return { y, x: frame.fields.find((f) => f.type === FieldType.time) };
}

function combine(a: number | undefined, b: number | undefined, how: 'max' | 'min' | 'sum'): number | undefined {
  if (a === undefined || b === undefined) {
    return a ?? b;
  }
  return how === 'max' ? Math.max(a, b) : how === 'min' ? Math.min(a, b) : a + b;
}

// How each target's series combine into one cell: ranks' KV usage by the busiest, engine states by the worst,
// counts by their sum (one series each when grouped, so the sum only matters for ungrouped answers).
const HOW: Record<string, 'max' | 'min' | 'sum'> = {
  [FLEET_REFS.state]: 'min',
  [FLEET_REFS.up]: 'min',
  [FLEET_REFS.kv]: 'max',
  [FLEET_REFS.running]: 'sum',
  [FLEET_REFS.waiting]: 'sum',
  [FLEET_REFS.ttft]: 'max',
  [FLEET_REFS.generation]: 'sum',
  [FLEET_REFS.imbalance]: 'max',
  [FLEET_REFS.acceptance]: 'max',
};

interface Acc {
  values: Record<string, number | undefined>;
  engines: number;
  dpRanks: boolean;
  related: Set<string>;
  kvTrend?: FieldSparkline;
  kvTrendLast?: number;
  generationTrend?: FieldSparkline;
}

/**
 * joinFleet turns the fleet query's frames (one per series, labelled) into one row per endpoint or model: the
 * client-side join that keeps the fleet page at one QueryData round trip. Names listed in `known` get a row even
 * when no series names them (an endpoint down since before the range).
 */
export function joinFleet(frames: DataFrame[], key: Key, known: string[] = []): FleetRow[] {
  const label = LABEL[key];
  const rows = new Map<string, Acc>();
  const row = (name: string) => {
    let r = rows.get(name);
    if (!r) {
      r = { values: {}, engines: 0, dpRanks: false, related: new Set() };
      rows.set(name, r);
    }
    return r;
  };
  known.forEach(row);
  const endpointModels = new Map<string, Set<string>>();
  const findings = new Map<string, number>();

  for (const frame of frames) {
    if (frame.refId === FLEET_REFS.diagnosis) {
      const endpoints = frame.fields.find((f) => f.name === 'endpoint');
      endpoints?.values.forEach((e: string) => findings.set(e, (findings.get(e) ?? 0) + 1));
      continue;
    }
    const field = valueField(frame);
    const labels = field?.labels ?? {};
    const name = labels[label];
    if (!field || !name || !frame.refId || !(frame.refId in HOW)) {
      continue;
    }
    if (labels.endpoint && labels.model_name) {
      endpointModels.set(labels.endpoint, (endpointModels.get(labels.endpoint) ?? new Set()).add(labels.model_name));
    }
    // Up is per endpoint: on model rows it has no meaning of its own (the endpoints behind a model have theirs).
    if (key === 'model' && frame.refId === FLEET_REFS.up) {
      continue;
    }
    const r = row(name);
    const v = lastValue(field);
    r.values[frame.refId] = combine(r.values[frame.refId], v, HOW[frame.refId]);
    const other = key === 'endpoint' ? labels.model_name : labels.endpoint;
    if (other) {
      r.related.add(other);
    }
    if (frame.refId === FLEET_REFS.kv) {
      r.engines++;
      r.dpRanks ||= labels.dp !== undefined;
      if (v !== undefined && (r.kvTrendLast === undefined || v > r.kvTrendLast)) {
        r.kvTrend = trend(frame, field);
        r.kvTrendLast = v;
      }
    }
    if (frame.refId === FLEET_REFS.generation && !r.generationTrend) {
      r.generationTrend = trend(frame, field);
    }
  }

  return [...rows.entries()]
    .map(([name, r]) => {
      const endpoints =
        key === 'endpoint' ? [name] : [...endpointModels].filter(([, m]) => m.has(name)).map(([e]) => e);
      return {
        name,
        state: state(r.values[FLEET_REFS.up], r.values[FLEET_REFS.state]),
        engines: r.engines,
        kv: r.values[FLEET_REFS.kv],
        running: r.values[FLEET_REFS.running],
        waiting: r.values[FLEET_REFS.waiting],
        ttft: r.values[FLEET_REFS.ttft],
        generation: r.values[FLEET_REFS.generation],
        imbalance: r.values[FLEET_REFS.imbalance],
        acceptance: r.values[FLEET_REFS.acceptance],
        findings: endpoints.reduce((n, e) => n + (findings.get(e) ?? 0), 0),
        related: [...r.related].sort(),
        dpRanks: r.dpRanks,
        kvTrend: r.kvTrend,
        generationTrend: r.generationTrend,
      };
    })
    .sort((a, b) => STATE_ORDER.indexOf(a.state) - STATE_ORDER.indexOf(b.state) || a.name.localeCompare(b.name));
}

/** state reads raw up (0: down) and engine_state (ENGINE_STATE's codes; no series on V0: up). */
function state(up: number | undefined, engine: number | undefined): State {
  if (up === 0) {
    return 'down';
  }
  if (engine !== undefined) {
    return ENGINE_STATES[Math.round(engine)] ?? 'unknown';
  }
  return up === 1 ? 'up' : 'unknown';
}
