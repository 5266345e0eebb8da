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
  /** Discovery: the source that found the endpoint, the role its labels give, and when it left (gone). */
  source?: string;
  role?: string;
  goneSince?: string;
  /** Now-values a showcase fleet sets; without them each query's value is derived from the endpoint's index. */
  now?: { running: number; waiting: number; ttft: number; tps: number; balance: number; acceptance: number };
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

/**
 * discoveredFleet is simFleet(n) found by Kubernetes discovery, roles from pod labels (the first prefill, the rest
 * decode), its last endpoint scaled away 10 minutes ago: its history still answers, ending up and online.
 */
export function discoveredFleet(n: number): SimEndpoint[] {
  return simFleet(n).map((e, i) => ({
    ...e,
    source: 'kubernetes #1',
    role: i === 0 ? 'prefill' : 'decode',
    ...(i === n - 1 ? { up: 1, state: 3, goneSince: new Date(Date.now() - 600_000).toISOString() } : {}),
  }));
}

/**
 * showcaseFleet is what the catalog's fleet screenshot shows: a healthy fleet of two models where one endpoint has a
 * realistic problem — one DP rank's KV cache full, requests queueing, TTFT p95 over a second, two findings.
 */
export function showcaseFleet(): SimEndpoint[] {
  const models = ['meta-llama/Llama-3.1-70B-Instruct', 'Qwen/Qwen3-32B'];
  return Array.from({ length: 10 }, (_, i) => {
    const ranks = i < 6 ? 4 : 2;
    const problem = i === 2;
    const kv = Array.from({ length: ranks }, (_, r) => (problem && r === 0 ? 97 : 38 + ((i * 11 + r * 7) % 30)));
    return {
      name: `${i < 6 ? 'llama-70b' : 'qwen3-32b'}-${String(i < 6 ? i : i - 6).padStart(2, '0')}`,
      model: models[i < 6 ? 0 : 1],
      flavor: i === 9 ? 'vllm-ascend' : 'vllm-v1',
      ranks,
      up: 1,
      state: 3,
      kv,
      findings: problem ? 2 : 0,
      profiler: i === 9 ? true : undefined,
      now: {
        running: problem ? 61 : 28 + ((i * 5) % 17),
        waiting: problem ? 14 : i % 3 === 0 ? 1 : 0,
        ttft: problem ? 1.38 : 0.14 + ((i * 37) % 90) / 1000,
        tps: problem ? 1650 : 2300 + ((i * 173) % 900),
        balance: problem ? 2.4 : 1.04 + ((i * 3) % 9) / 100,
        acceptance: 0.62 + ((i * 7) % 12) / 100,
      },
    };
  });
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
    // A departed endpoint is listed as gone, neither up nor down.
    ...(e.goneSince ? { up: false, gone: true, goneSince: e.goneSince, version: undefined } : {}),
    ...(e.source ? { source: e.source, role: e.role } : {}),
  }));
}

type Labels = Record<string, string>;

function anchored(re: string | undefined, s: string): boolean {
  return !re || new RegExp(`^(?:${re})$`).test(s);
}

/** POINTS is each series' length: a point a minute over the default hour, so charts and sparklines have a shape. */
export const POINTS = 61;

/** seedOf spreads series apart: a small deterministic number from the series' name and labels. */
function seedOf(text: string): number {
  let h = 7;
  for (const c of text) {
    h = (h * 31 + c.charCodeAt(0)) % 9973;
  }
  return h;
}

/**
 * history is an hour of a series ending at value: load that swells and ebbs with two waves per series, as a fleet's
 * traffic does; states (engine_state, up) hold still.
 */
function history(value: number, steady: boolean, seed: number): number[] {
  const wave = (k: number) => 0.12 * Math.sin((k + seed) / 7) + 0.06 * Math.sin((k * 3 + seed) / 2.2);
  // Relative to the last point's wave, so each series ends exactly at its value, without a jump.
  return Array.from({ length: POINTS }, (_, k) => (steady ? value : value * (1 + wave(k) - wave(POINTS - 1))));
}

/** legend is the series name the backend gives from the query's legendFormat ({{label}} replaced), if it has one. */
function legend(format: string | undefined, labels: Labels): string | undefined {
  return format ? format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l: string) => labels[l] ?? '') : undefined;
}

function series(q: VllmQuery, name: string, labels: Labels, value: number, from: number, to: number, steady = false) {
  const times = Array.from({ length: POINTS }, (_, k) => from + ((to - from) * k) / (POINTS - 1));
  const displayNameFromDS = legend(q.legendFormat, labels);
  return {
    schema: {
      refId: q.refId,
      fields: [
        { name: 'Time', type: 'time' },
        { name, type: 'number', labels, ...(displayNameFromDS ? { config: { displayNameFromDS } } : {}) },
      ],
    },
    data: { values: [times, history(value, steady, seedOf(name + JSON.stringify(labels)))] },
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
      if (e.now) {
        return q.measure === 'waiting' ? e.now.waiting : e.now.running;
      }
      return q.measure === 'waiting' ? i % 7 : 10 + i;
    case 'latency':
      if (q.metric === 'itl') {
        return e.now ? e.now.ttft / 8 : 0.02 + i / 1000; // a token every 20–30 ms
      }
      return e.now ? e.now.ttft : 0.1 + i / 100;
    case 'throughput':
      if (q.measure === 'errors') {
        return e.now ? (e.findings ? 0.021 : 0.002) : (i % 4) / 100; // the failed share (the frame's second output)
      }
      if (q.measure === 'requests') {
        return e.now ? e.now.tps / 400 : 3 + i / 10; // finished requests/s
      }
      return e.now ? e.now.tps : 1000 + i * 10;
    case 'dp_balance':
      return e.now ? e.now.balance : 1 + (i % 4) / 4;
    case 'spec_decode':
      return e.now ? e.now.acceptance : 0.5 + (i % 5) / 10;
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
  // The errors measure's share is its second output, named as the backend names it.
  const name = q.measure === 'errors' ? 'failed_request_ratio' : (q.measure ?? q.metric ?? q.queryType ?? 'value');
  const steady = q.queryType === 'engine_state' || q.queryType === 'raw';
  // A down endpoint answers nothing but up 0.
  const live = selected.filter(({ e }) => e.up === 1 || q.queryType === 'raw');
  if (q.groupBy === 'model') {
    const models = [...new Set(live.map(({ e }) => e.model))];
    return models.map((m, i) =>
      series(q, name, { model_name: m }, value(q, live.find(({ e }) => e.model === m)!.e, i), from, to, steady)
    );
  }
  if (q.groupBy === 'endpoint' || q.queryType === 'raw') {
    return live.map(({ e, i }) =>
      series(q, name, { endpoint: e.name, model_name: e.model }, value(q, e, i), from, to, steady)
    );
  }
  return live.flatMap(({ e, i }) =>
    e.kv.map((_, r) => {
      const rank: Labels = e.flavor === 'vllm-ascend' ? { dp: String(r) } : { engine: String(r) };
      return series(q, name, { endpoint: e.name, model_name: e.model, ...rank }, value(q, e, i, r), from, to, steady);
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
