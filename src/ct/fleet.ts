import type { EndpointStatus, VllmQuery } from '../datasource/types';

// A simulated fleet for the app pages' tests (Jest and the browser): the answers the backend would give the pages'
// queries, computed from a list of endpoints, so a test can ask for 3 endpoints or 64 and check every cell.

/** SimEndpoint is one simulated endpoint: its model, flavor, ranks and what its metrics say now. */
export interface SimEndpoint {
  name: string;
  model: string;
  flavor: 'vllm-v1' | 'vllm-ascend' | 'dynamo-worker';
  ranks: number;
  /** up 0 is a failing scrape; state is engine_state's 3 online, 2 asleep, 1 unhealthy. */
  up: 0 | 1;
  state: 1 | 2 | 3;
  /** kv is each rank's KV usage %. */
  kv: number[];
  findings: number;
  profiler?: boolean;
}

/** simFleet is n endpoints serving two models, the first three asleep, unhealthy and down. */
export function simFleet(n: number): SimEndpoint[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `vllm-${String(i).padStart(2, '0')}`,
    model: i % 2 ? 'llama-3-8b' : 'qwen2-72b',
    flavor: i % 4 === 3 ? 'vllm-ascend' : 'vllm-v1',
    ranks: 1 + (i % 3),
    up: i === 2 ? 0 : 1,
    state: i === 0 ? 2 : i === 1 ? 1 : 3,
    kv: Array.from({ length: 1 + (i % 3) }, (_, r) => 10 + ((i * 7 + r * 13) % 80)),
    findings: i % 5 === 0 ? 2 : 0,
    profiler: i % 4 === 3 ? i % 8 === 3 : undefined,
  }));
}

/** endpointsResource is the data source's endpoints resource for the fleet (direct mode: status and detection). */
export function endpointsResource(fleet: SimEndpoint[]): EndpointStatus[] {
  return fleet.map((e) => ({
    name: e.name,
    url: `http://127.0.0.1:8000/${e.name}/metrics`,
    up: e.up === 1,
    detection: { flavor: e.flavor, ranks: e.kv.map((_, r) => String(r)), ascendProfiler: e.profiler },
    // vLLM's API server answers /version; Dynamo's ports do not.
    version: e.flavor.startsWith('dynamo') ? undefined : e.flavor === 'vllm-ascend' ? '0.11.0' : '0.13.0',
  }));
}

type Labels = Record<string, string>;

function anchored(re: string | undefined, s: string): boolean {
  return !re || new RegExp(`^(?:${re})$`).test(s);
}

function series(refId: string, name: string, labels: Labels, value: number, from: number, to: number) {
  const times = [from, (from + to) / 2, to];
  return {
    schema: {
      refId,
      fields: [
        { name: 'Time', type: 'time' },
        { name, type: 'number', labels },
      ],
    },
    // A rising trend ending at the value, so sparklines have a shape.
    data: { values: [times, [value * 0.5, value * 0.8, value]] },
  };
}

/** value is a query's newest value for one endpoint (and rank); distinct per endpoint so tests can find each cell. */
function value(q: VllmQuery, e: SimEndpoint, i: number, rank?: number): number {
  switch (q.queryType) {
    case 'engine_state':
      return e.state;
    case 'raw':
      return e.up;
    case 'kv_cache_usage':
      return rank === undefined ? Math.max(...e.kv) : e.kv[rank];
    case 'queue':
      return q.measure === 'waiting' ? i % 7 : 10 + i;
    case 'latency':
      return 0.1 + i / 100;
    case 'throughput':
      return 1000 + i * 10;
    case 'dp_balance':
      return 1 + (i % 4) / 4;
    case 'spec_decode':
      return 0.5 + (i % 5) / 10;
    default:
      return i;
  }
}

/** frames answers one query for the fleet as the backend would: labelled frames, or the diagnosis table. */
export function frames(q: VllmQuery, fleet: SimEndpoint[], from: number, to: number) {
  const selected = fleet
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => anchored(q.endpoint, e.name) && anchored(q.model, e.model));
  if (q.queryType === 'diagnosis') {
    const rows = selected.flatMap(({ e }) => Array.from({ length: e.findings }, (_, k) => [e.name, k]));
    return [
      {
        schema: {
          refId: q.refId,
          name: 'diagnosis',
          fields: ['severity', 'symptom', 'endpoint', 'engine', 'value', 'likely cause', 'knob'].map((name) => ({
            name,
            type: name === 'value' ? 'number' : 'string',
          })),
        },
        data: {
          values: [
            rows.map(() => 'warning'),
            rows.map(([, k]) => (k ? 'prefix-cache hit rate below 40 %' : 'TTFT p95 above 500 ms')),
            rows.map(([name]) => name),
            rows.map(() => '0'),
            rows.map(() => 0.7),
            rows.map(() => 'prefills wait or run unchunked'),
            rows.map(() => '--enable-chunked-prefill'),
          ],
        },
      },
    ];
  }
  const name = q.measure ?? q.metric ?? q.queryType ?? 'value';
  // A down endpoint answers nothing but up 0.
  const live = selected.filter(({ e }) => e.up === 1 || q.queryType === 'raw');
  if (q.groupBy === 'model') {
    const models = [...new Set(live.map(({ e }) => e.model))];
    return models.map((m, i) =>
      series(q.refId, name, { model_name: m }, value(q, live.find(({ e }) => e.model === m)!.e, i), from, to)
    );
  }
  if (q.groupBy === 'endpoint' || q.queryType === 'raw') {
    return live.map(({ e, i }) =>
      series(q.refId, name, { endpoint: e.name, model_name: e.model }, value(q, e, i), from, to)
    );
  }
  return live.flatMap(({ e, i }) =>
    e.kv.map((_, r) => {
      const rank: Labels = e.flavor === 'vllm-ascend' ? { dp: String(r) } : { engine: String(r) };
      return series(q.refId, name, { endpoint: e.name, model_name: e.model, ...rank }, value(q, e, i, r), from, to);
    })
  );
}

/** queryAnswer is the body of POST /api/ds/query for the fleet: every query's frames, by refId. */
export function queryAnswer(body: { queries: VllmQuery[]; from?: string; to?: string }, fleet: SimEndpoint[]) {
  const to = Number(body.to ?? Date.now());
  const from = Number(body.from ?? to - 3600_000);
  return {
    results: Object.fromEntries(
      body.queries.map((q) => [q.refId, { status: 200, frames: frames(q, fleet, from, to) }])
    ),
  };
}
