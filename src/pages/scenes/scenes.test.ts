import { of } from 'rxjs';
import { FieldType, toDataFrame } from '@grafana/data';
import { setBackendSrv } from '@grafana/runtime';
import {
  DataSourceVariable,
  EmbeddedScene,
  SceneObject,
  SceneQueryRunner,
  SceneRefreshPicker,
  SceneTimePicker,
  VizPanel,
  sceneGraph,
} from '@grafana/scenes';
import { endpointsResource, POINTS, queryAnswer, simFleet, type SimEndpoint } from '../../ct/fleet';
import { installScenes } from '../../ct/scenes';
import type { VllmQuery } from '../../datasource/types';
import { fleetApp } from './app';
import { AscendSection, detailScene } from './detail';
import { FleetTable, fleetScene } from './fleet';
import { joinFleet } from './join';
import ascendDashboard from '../../../dashboards/ascend-per-dp.json';
import minimalDashboard from '../../../dashboards/vllm-minimal.json';
import { ascendPanels, DS_REF, FLEET_REFS } from './queries';
import { STATUS_REFS, joinStatus } from './status';
import { ExploreLink, exploreUrl } from './shared';

interface Call {
  url: string;
  method?: string;
  data?: { queries: VllmQuery[] };
}

let calls: Call[] = [];
let fleet: SimEndpoint[] = [];

beforeEach(() => {
  calls = [];
  fleet = simFleet(3);
  installScenes();
  setBackendSrv({
    fetch: (req: Call) => {
      calls.push(req);
      if (req.url.startsWith('/api/ds/query')) {
        return of({ data: queryAnswer(req.data!, fleet), status: 200 });
      }
      if (req.url.endsWith('/resources/endpoints')) {
        return of({ data: endpointsResource(fleet), status: 200 });
      }
      throw new Error(`unexpected request ${req.url}`);
    },
  } as never);
});

/** activate activates a scene object and everything under it, as rendering would; returns the deactivation. */
function activate(o: SceneObject): () => void {
  const undo = [o.activate()];
  o.forEachChild((c) => undo.push(activate(c)));
  return () => undo.reverse().forEach((u) => u());
}

function find<T extends SceneObject>(scene: SceneObject, type: new (...a: never[]) => T): T[] {
  return sceneGraph.findAllObjects(scene, (o) => o instanceof type) as T[];
}

const queries = (r: SceneQueryRunner) => r.state.queries as VllmQuery[];
const dataCalls = () => calls.filter((c) => c.url.startsWith('/api/ds/query'));

describe('fleet scene', () => {
  it('has one query runner on the data-source variable, every target grouped by endpoint but KV, up and diagnosis', () => {
    const scene = fleetScene('endpoint');
    const runners = find(scene, SceneQueryRunner);
    expect(runners).toHaveLength(1);
    expect(runners[0].state.datasource).toEqual(DS_REF);
    expect(DS_REF.uid).toBe('$ds');
    const variable = find(scene, DataSourceVariable)[0];
    expect([variable.state.name, variable.state.pluginId]).toEqual(['ds', 'inferscope-vllm-datasource']);
    const all = queries(runners[0]);
    expect(all.map((t) => t.refId)).toEqual([...Object.values(FLEET_REFS), ...Object.values(STATUS_REFS)]);
    const q = all.filter((t) => (Object.values(FLEET_REFS) as string[]).includes(t.refId));
    expect(q.filter((t) => t.groupBy === 'endpoint').map((t) => t.refId)).toEqual([
      'state',
      'running',
      'waiting',
      'ttft',
      'generation',
      'imbalance',
      'acceptance',
    ]);
    expect(q.find((t) => t.refId === 'up')).toEqual({ refId: 'up', queryType: 'raw', metric: 'up' });
    expect(q.find((t) => t.refId === 'ttft')).toMatchObject({
      queryType: 'latency',
      metric: 'ttft',
      quantiles: [0.95],
    });
    expect(q.find((t) => t.refId === 'imbalance')).toMatchObject({
      queryType: 'dp_balance',
      measure: 'running_waiting',
      score: 'max_over_mean',
    });
  });

  it('groups by model on the Models tab', () => {
    const q = queries(find(fleetScene('model'), SceneQueryRunner)[0]).filter((t) =>
      (Object.values(FLEET_REFS) as string[]).includes(t.refId)
    );
    expect(q.filter((t) => t.groupBy === 'model')).toHaveLength(7);
    expect(q.some((t) => t.groupBy === 'endpoint')).toBe(false);
  });

  it('keeps the data source, time range, refresh and the table filter in the URL', () => {
    const scene = fleetScene('endpoint');
    const table = find(scene, FleetTable)[0];
    expect(table.urlSync?.getKeys()).toEqual(['filter']);
    expect(find(scene, DataSourceVariable)[0].urlSync?.getKeys()).toEqual(['var-ds']);
    expect(scene.state.$timeRange?.urlSync?.getKeys()).toEqual(expect.arrayContaining(['from', 'to']));
    // The controls: time picker and refresh picker (every minute by default), both in the URL.
    const refresh = scene.state.controls?.find((c) => c instanceof SceneRefreshPicker) as SceneRefreshPicker;
    expect([refresh.state.refresh, refresh.urlSync?.getKeys()]).toEqual(['1m', ['refresh']]);
    expect(scene.state.controls?.some((c) => c instanceof SceneTimePicker)).toBe(true);
    table.urlSync?.updateFromUrl({ filter: 'vllm-0[12]' });
    expect(table.state.filter).toBe('vllm-0[12]');
    expect(table.urlSync?.getUrlState()).toEqual({ filter: 'vllm-0[12]' });
  });

  it.each([3, 64])('renders %i endpoints from one QueryData round trip per refresh', async (n) => {
    fleet = simFleet(n);
    const scene = fleetScene('endpoint');
    const deactivate = activate(scene);
    const runner = find(scene, SceneQueryRunner)[0];
    await waitFor(() => runner.state.data?.state === 'Done');
    expect(dataCalls()).toHaveLength(1);
    expect(dataCalls()[0].data?.queries.every((q) => (q.datasource as { uid?: string })?.uid === 'vllm')).toBe(true);
    const rows = joinFleet(runner.state.data!.series, 'endpoint');
    expect(rows).toHaveLength(n);
    runner.runQueries(); // what the refresh picker does on its interval
    await waitFor(() => dataCalls().length === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(dataCalls()).toHaveLength(2);
    // The endpoints resource (flavors, profiler) is read once per data-source selection, not per refresh.
    expect(calls.filter((c) => c.url.endsWith('/resources/endpoints'))).toHaveLength(1);
    deactivate();
  });
});

describe('joinFleet', () => {
  it('reads state, the busiest rank, rank count and findings per endpoint', async () => {
    const scene = fleetScene('endpoint');
    const deactivate = activate(scene);
    const runner = find(scene, SceneQueryRunner)[0];
    await waitFor(() => runner.state.data?.state === 'Done');
    const rows = joinFleet(runner.state.data!.series, 'endpoint');
    deactivate();
    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(byName['vllm-00']).toMatchObject({ state: 'sleeping', engines: 1, kv: 10, findings: 2, running: 10 });
    expect(byName['vllm-01']).toMatchObject({ state: 'unhealthy', engines: 2, kv: Math.max(...fleet[1].kv) });
    expect(byName['vllm-02']).toMatchObject({ state: 'down', engines: 0, kv: undefined });
    // Worst first: the down endpoint leads.
    expect(rows.map((r) => r.name)).toEqual(['vllm-02', 'vllm-01', 'vllm-00']);
    expect(byName['vllm-01'].kvTrend?.y.values).toHaveLength(POINTS);
    expect(rows.filter((r) => r.dpRanks).map((r) => r.name)).toEqual([]); // no vLLM-Ascend among the three
  });

  it('joins model rows with their endpoints and those endpoints findings', () => {
    const kv = (endpoint: string, model: string, v: number) =>
      toDataFrame({
        refId: 'kv',
        fields: [
          { name: 'Time', type: FieldType.time, values: [1] },
          { name: 'kv_usage', type: FieldType.number, values: [v], labels: { endpoint, model_name: model } },
        ],
      });
    const state = toDataFrame({
      refId: 'state',
      fields: [
        { name: 'Time', type: FieldType.time, values: [1] },
        { name: 'engine_state', type: FieldType.number, values: [2], labels: { model_name: 'm' } },
      ],
    });
    const diagnosis = toDataFrame({ refId: 'diagnosis', fields: [{ name: 'endpoint', values: ['a', 'a', 'c'] }] });
    const rows = joinFleet([kv('a', 'm', 40), kv('b', 'm', 70), kv('c', 'n', 5), state, diagnosis], 'model');
    expect(rows.find((r) => r.name === 'm')).toMatchObject({
      state: 'sleeping',
      engines: 2,
      kv: 70,
      findings: 2,
      related: ['a', 'b'],
    });
    expect(rows.find((r) => r.name === 'n')).toMatchObject({ state: 'unknown', findings: 1 });
  });
});

describe('joinStatus', () => {
  it("shows each model's service status from the fleet page's one round trip", async () => {
    // simFleet(4): qwen2-72b on vllm-00 (asleep) and vllm-02 (down); llama-3-8b on vllm-01 (unhealthy) and vllm-03.
    fleet = simFleet(4);
    const scene = fleetScene('endpoint');
    const deactivate = activate(scene);
    const runner = find(scene, SceneQueryRunner)[0];
    await waitFor(() => runner.state.data?.state === 'Done');
    const cards = joinStatus(runner.state.data!.series);
    deactivate();
    expect(dataCalls()).toHaveLength(1);
    const byModel = Object.fromEntries(cards.map((c) => [c.model, c]));
    // A model serves while any endpoint does: llama has an online engine beside the unhealthy one.
    expect(byModel['llama-3-8b'].state).toBe('online');
    expect(byModel['qwen2-72b'].state).toBe('sleeping');
    // Per model: the first live endpoint's values in the simulated fleet (src/ct/fleet.ts).
    expect(byModel['qwen2-72b'].ttft).toBeCloseTo(0.1);
    expect(byModel['qwen2-72b'].outputSpeed).toBeCloseTo(1 / 0.02);
    expect(byModel['llama-3-8b'].outputSpeed).toBeCloseTo(1 / 0.021);
    expect(byModel['qwen2-72b'].success).toBeCloseTo(1);
    expect(byModel['llama-3-8b'].success).toBeCloseTo(0.99);
    expect(byModel['llama-3-8b'].perMinute).toBeCloseTo(3.1 * 60);
    // Worst state first.
    expect(cards.map((c) => c.model)).toEqual(['qwen2-72b', 'llama-3-8b']);
  });

  it('is down when every endpoint of a model fails its scrapes, and online on V0 (no engine state) when one answers', () => {
    const frame = (refId: string, name: string, v: number, labels: Record<string, string>) =>
      toDataFrame({
        refId,
        fields: [
          { name: 'Time', type: FieldType.time, values: [1, 2] },
          { name, type: FieldType.number, values: [NaN, v], labels },
        ],
      });
    const cards = joinStatus([
      frame(STATUS_REFS.up, 'up', 0, { endpoint: 'a', model_name: 'gone' }),
      frame(STATUS_REFS.up, 'up', 0, { endpoint: 'b', model_name: 'gone' }),
      frame(STATUS_REFS.up, 'up', 1, { endpoint: 'c', model_name: 'v0' }),
      frame(STATUS_REFS.ttft, 'ttft', 0.2, { model_name: 'v0' }),
      frame(STATUS_REFS.errors, 'failed_requests_per_second', 3, { model_name: 'v0' }),
      frame(STATUS_REFS.errors, 'failed_request_ratio', 0.25, { model_name: 'v0' }),
      frame(STATUS_REFS.requests, 'requests_per_second', 1, { model_name: 'v0', finished_reason: 'stop' }),
      frame(STATUS_REFS.requests, 'requests_per_second', 0.5, { model_name: 'v0', finished_reason: 'length' }),
    ]);
    expect(cards).toEqual([
      { model: 'gone', state: 'down' },
      { model: 'v0', state: 'online', ttft: 0.2, success: 0.75, perMinute: 90 },
    ]);
  });
});

describe('endpoint and model scenes', () => {
  it('narrow every panel to the endpoint (escaped), one runner per panel, each with an Explore link', () => {
    const scene = detailScene({ endpoint: 'vllm.a' });
    const panels = find(scene, VizPanel);
    expect(panels.map((p) => p.state.pluginId)).toEqual([...Array(7).fill('timeseries'), 'table']);
    for (const p of panels) {
      const runner = p.state.$data as SceneQueryRunner;
      expect(runner.state.datasource).toEqual(DS_REF);
      expect(queries(runner).every((q) => q.endpoint === 'vllm\\.a' && q.model === undefined)).toBe(true);
      expect(queries(runner).map((q) => q.refId)).toEqual(['A', 'B'].slice(0, queries(runner).length));
      expect(p.state.headerActions).toBeInstanceOf(ExploreLink);
    }
    const minimal = panels.slice(0, 4).flatMap((p) => queries(p.state.$data as SceneQueryRunner));
    expect(minimal.map((q) => [q.queryType, q.measure ?? q.metric])).toEqual([
      ['latency', 'ttft'],
      ['latency', 'tpot'],
      ['throughput', 'generation_tokens'],
      ['queue', 'running'],
      ['queue', 'waiting'],
      ['kv_cache_usage', undefined],
      ['cache', 'preemptions'],
    ]);
    expect(queries(panels[5].state.$data as SceneQueryRunner)[0]).toMatchObject({ measure: 'per_position' });
    expect(queries(panels[7].state.$data as SceneQueryRunner)[0]).toMatchObject({ queryType: 'diagnosis' });
  });

  it("shows the minimal and Ascend dashboards' panels as the dashboards define them, narrowed by the page", () => {
    // The dashboard's targets without its data source and variables: what the page must send besides its filter.
    const own = (d: typeof minimalDashboard | typeof ascendDashboard, id: number) =>
      (d.panels as Array<{ id: number; targets?: Array<Record<string, unknown>> }>)
        .find((p) => p.id === id)!
        .targets!.map((t) =>
          Object.fromEntries(
            Object.entries(t).filter(([k, v]) => k !== 'datasource' && !(typeof v === 'string' && v.startsWith('$')))
          )
        );
    const panels = find(detailScene({ endpoint: 'vllm.a' }), VizPanel).slice(0, 4);
    panels.forEach((p, i) => {
      expect(queries(p.state.$data as SceneQueryRunner)).toEqual(
        own(minimalDashboard, i + 1).map((t) => ({ ...t, endpoint: 'vllm\\.a' }))
      );
    });
    const model = find(detailScene({ model: 'm' }), VizPanel).slice(0, 4);
    model.forEach((p, i) => {
      expect(queries(p.state.$data as SceneQueryRunner)).toEqual(
        own(minimalDashboard, i + 1).map((t) => ({ ...t, model: 'm', groupBy: 'endpoint' }))
      );
    });
    const ascend = ascendPanels('vllm-03');
    expect(ascend.map((p) => p.targets)).toEqual(
      [3, 6, 10, 13].map((id) => own(ascendDashboard, id).map((t) => ({ ...t, endpoint: 'vllm-03' })))
    );
  });

  it('adds the per-DP views for a vLLM-Ascend endpoint only', async () => {
    fleet = simFleet(4); // vllm-03 is vLLM-Ascend
    for (const [name, ascend] of [
      ['vllm-03', true],
      ['vllm-01', false],
    ] as const) {
      const asked = () => calls.filter((c) => c.url.endsWith('/resources/endpoints')).length;
      const before = asked();
      const scene = detailScene({ endpoint: name });
      const deactivate = activate(scene);
      const section = find(scene, AscendSection)[0];
      await waitFor(() => asked() > before);
      await new Promise((r) => setTimeout(r, 0)); // the answer's promise settles, then the section shows or not
      expect(Boolean(section.state.body)).toBe(ascend);
      if (ascend) {
        const q = find(section, SceneQueryRunner).flatMap(queries);
        expect(q.map((t) => t.measure ?? t.metric)).toContain('ascend_batch_size');
        expect(q.every((t) => t.endpoint === name)).toBe(true);
      }
      deactivate();
    }
  });

  it('in Prometheus mode (no detection in the resource), tells vLLM-Ascend by its dp-labelled KV series', async () => {
    fleet = simFleet(4);
    setBackendSrv({
      fetch: (req: Call) => {
        calls.push(req);
        if (req.url.startsWith('/api/ds/query')) {
          return of({ data: queryAnswer(req.data!, fleet), status: 200 });
        }
        return of({ data: fleet.map((e) => ({ name: e.name })), status: 200 });
      },
    } as never);
    for (const [name, ascend] of [
      ['vllm-03', true],
      ['vllm-01', false],
    ] as const) {
      const scene = detailScene({ endpoint: name });
      const deactivate = activate(scene);
      const section = find(scene, AscendSection)[0];
      const kv = find(scene, SceneQueryRunner).find((r) => queries(r)[0].queryType === 'kv_cache_usage')!;
      await waitFor(() => kv.state.data?.state === 'Done');
      await new Promise((r) => setTimeout(r, 0));
      expect(Boolean(section.state.body)).toBe(ascend);
      deactivate();
    }
  });

  it('narrows the model page to the model with a series per endpoint', () => {
    const panels = find(detailScene({ model: 'llama-3-8b' }), VizPanel);
    const q = panels.flatMap((p) => queries(p.state.$data as SceneQueryRunner));
    expect(q.every((t) => t.model === 'llama-3-8b' && t.endpoint === undefined)).toBe(true);
    // A series per endpoint serving the model (the diagnosis is a table of its own).
    expect(q.filter((t) => t.queryType !== 'diagnosis').every((t) => t.groupBy === 'endpoint')).toBe(true);
  });

  it('links Explore with the panel queries on the selected data source', () => {
    const url = exploreUrl('vllm', [{ refId: 'A', queryType: 'queue' }], 'now-1h', 'now');
    const panes = JSON.parse(new URLSearchParams(url.split('?')[1]).get('panes')!);
    expect(panes.a).toEqual({
      datasource: 'vllm',
      queries: [{ refId: 'A', queryType: 'queue', datasource: { type: 'inferscope-vllm-datasource', uid: 'vllm' } }],
      range: { from: 'now-1h', to: 'now' },
    });
  });
});

describe('the app', () => {
  it('has the fleet tabs and their drill-downs under the app', () => {
    const app = fleetApp();
    const [fleetPage] = app.state.pages;
    expect(fleetPage.state.url).toBe('/a/inferscope-vllm-app');
    const tabs = fleetPage.state.tabs!;
    expect(tabs.map((t) => t.state.url)).toEqual([
      '/a/inferscope-vllm-app',
      '/a/inferscope-vllm-app/models',
      '/a/inferscope-vllm-app/about',
    ]);
    const endpoint = tabs[0].state.drilldowns![0];
    const page = endpoint.getPage({ params: { endpoint: 'vllm/a' }, isExact: true, path: '', url: '' }, tabs[0]);
    expect(page.state.url).toBe('/a/inferscope-vllm-app/endpoint/vllm%2Fa');
    expect(page.state.getParentPage?.()).toBe(tabs[0]);
    expect(page.state.preserveUrlKeys).toEqual(['var-ds', 'from', 'to', 'refresh']);
    const scene = page.getScene({ params: {}, isExact: true, path: '', url: 'x' }) as EmbeddedScene;
    expect(find(scene, SceneQueryRunner).flatMap(queries)[0].endpoint).toBe('vllm/a');
  });
});

async function waitFor(ok: () => boolean, ms = 3000) {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > ms) {
      throw new Error('timed out');
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
