import React from 'react';
import { expect, test } from '@playwright/experimental-ct-react';
import type { Page } from '@playwright/test';
import type { HooksConfig } from '../../ct/backend';
import { requests, screenshot, screenshotOf, THEMES } from '../../ct/helpers';
import { AppStory } from '../../ct/stories';
import { testIds } from '../testIds';

// The app's Scenes pages in the browser: Grafana's real table, sparklines and panel chrome; the backend answers the
// data source's queries from a simulated fleet (src/ct/fleet.ts); time-series panels are drawn with TimeSeries over
// an hour of it, other panels are stand-ins listing their series (src/ct/scenes.tsx).

const base = '/a/inferscope-vllm-app';
const resources = '/api/plugins/inferscope-vllm-app/resources';
const file = (name: string, endpoint: string) => ({
  name,
  path: `/var/lib/inferscope/${name}/ms_service_profiler_config.json`,
  metricsUrl: `http://127.0.0.1:8000/${endpoint}/metrics`,
  exists: true,
  metricEnable: 0,
  enable: 1,
  exposed: false,
});
// The app's allow-listed profiler config files: one for vllm-03's deployment, one for another.
const profiler = {
  [`GET ${resources}/profiler-configs`]: {
    profilerConfigs: [file('ascend-03', 'vllm-03'), file('ascend-07', 'vllm-07')],
    canWrite: true,
    allowEditorsToWrite: false,
  },
  [`PUT ${resources}/profiler-configs/ascend-03/metric-enable`]: { ...file('ascend-03', 'vllm-03'), metricEnable: 1 },
};
// No profiler agents unless a test lists some.
const noAgents = {
  [`GET ${resources}/agents`]: {
    agents: [],
    canWrite: false,
    canProfile: false,
    maxProfileSeconds: 600,
    maxTraceBytes: 67108864,
  },
};
const hooks = (fleet: number, extra: Partial<HooksConfig> = {}): { hooksConfig: HooksConfig } => ({
  hooksConfig: { plugin: 'inferscope-vllm-app', fleet, ...extra, routes: { ...noAgents, ...extra.routes } },
});

async function queryRequests(page: Page) {
  return (await requests(page)).filter((r) => r.url.startsWith('/api/ds/query'));
}

function search(page: Page): URLSearchParams {
  return new URL(page.url()).searchParams;
}

test('the fleet table: one row per endpoint with its state, flavor, KV and findings, from one query', async ({
  mount,
  page,
}) => {
  await mount(<AppStory path={base} />, hooks(4));
  const table = page.getByTestId(testIds.fleet.table('endpoint'));
  await expect(table.getByRole('row')).toHaveCount(5);
  // No endpoint was discovered with a role label: no role column.
  await expect(table.getByRole('columnheader', { name: 'Role (labels)' })).toHaveCount(0);
  const row = (name: string) => table.getByRole('row').filter({ has: page.getByTestId(testIds.fleet.link(name)) });
  await expect(row('vllm-00')).toContainText('sleeping');
  await expect(row('vllm-01')).toContainText('unhealthy');
  await expect(row('vllm-02')).toContainText('down');
  await expect(row('vllm-03')).toContainText('vllm-ascend 0.11.0'); // flavor and the release /version answered
  await expect(row('vllm-03')).toContainText('metrics on');
  await expect(row('vllm-00')).toContainText('10.0 %'); // KV usage of its one rank
  await expect(row('vllm-03').locator('canvas').first()).toBeVisible(); // sparklines
  expect(await queryRequests(page)).toHaveLength(1);
  expect(search(page).get('var-ds')).toBe('vllm');
});

test('a discovered fleet: a departed endpoint is gone (not down, not up), and roles come from pod labels', async ({
  mount,
  page,
}) => {
  await mount(<AppStory path={base} />, hooks(4, { discovered: true }));
  const table = page.getByTestId(testIds.fleet.table('endpoint'));
  await expect(table.getByRole('row')).toHaveCount(5);
  const row = (name: string) => table.getByRole('row').filter({ has: page.getByTestId(testIds.fleet.link(name)) });
  // vllm-03 left 10 minutes ago: its history still answers, ending online, but the data source lists it as gone.
  const state = (name: string) => row(name).getByRole('cell').nth(3);
  await expect(state('vllm-03')).toHaveText('gone');
  await expect(state('vllm-02')).toHaveText('down'); // a failing scrape is still down
  await expect(state('vllm-00')).toHaveText('sleeping');
  await state('vllm-03').getByText('gone').hover();
  await expect(page.getByRole('tooltip')).toContainText('Discovery no longer lists it since');
  const role = (name: string) => row(name).getByRole('cell').nth(4);
  await expect(role('vllm-00')).toHaveText('prefill');
  await expect(role('vllm-01')).toHaveText('decode');
  await expect(role('vllm-00').getByTitle('From the labels kubernetes #1 found')).toBeVisible();
  // Sorted by state, worst first: gone ranks below up.
  await table.getByRole('columnheader', { name: 'State' }).getByRole('button').click();
  await expect(table.getByRole('row').nth(1)).toContainText('vllm-02');
  await expect(table.getByRole('row').nth(4)).toContainText('vllm-03');
});

test('sorting and filtering; the filter is kept in the URL', async ({ mount, page }) => {
  await mount(<AppStory path={base} />, hooks(4));
  const table = page.getByTestId(testIds.fleet.table('endpoint'));
  await expect(table.getByRole('row')).toHaveCount(5);
  // Sorted by KV usage, descending: vllm-03 (31 %) beats vllm-01's busiest rank (30 %).
  await table
    .getByRole('columnheader', { name: /KV usage/ })
    .getByRole('button')
    .click();
  await table
    .getByRole('columnheader', { name: /KV usage/ })
    .getByRole('button')
    .click();
  await expect(table.getByRole('row').nth(1)).toContainText('vllm-03');
  await expect(table.getByRole('row').nth(2)).toContainText('vllm-01');
  await page.getByTestId(testIds.fleet.filter).fill('vllm-0[03]');
  await expect(table.getByRole('row')).toHaveCount(3);
  await expect(page.getByTestId(testIds.fleet.count)).toHaveText('2 / 4');
  await expect.poll(() => search(page).get('filter')).toBe('vllm-0[03]');
});

test('a link with a filter and a time range reproduces the view', async ({ mount, page }) => {
  await mount(<AppStory path={`${base}?var-ds=vllm&from=now-6h&to=now&filter=vllm-01`} />, hooks(4));
  const table = page.getByTestId(testIds.fleet.table('endpoint'));
  await expect(table.getByRole('row')).toHaveCount(2);
  await expect(page.getByTestId(testIds.fleet.filter)).toHaveValue('vllm-01');
  const [query] = await queryRequests(page);
  const body = query.data as { from: string; to: string };
  expect(Number(body.to) - Number(body.from)).toBeCloseTo(6 * 3600_000, -4);
});

test('a row drills down to the endpoint page: its panels, the findings and, for Ascend, the per-DP views', async ({
  mount,
  page,
}) => {
  await mount(<AppStory path={`${base}?from=now-3h&to=now`} />, hooks(4, { routes: profiler }));
  await page.getByTestId(testIds.fleet.link('vllm-03')).click();
  await expect.poll(() => new URL(page.url()).pathname).toBe(`${base}/endpoint/vllm-03`);
  expect(search(page).get('var-ds')).toBe('vllm');
  expect(search(page).get('from')).toBe('now-3h');
  for (const title of [
    'Latency: p95 TTFT and p95 TPOT',
    'Throughput: generated tokens/s',
    'Queue depth: running + waiting',
    'KV-cache pressure: usage % and preemptions/s',
    'DP balance: max/mean and idle ranks',
    'Spec-decode acceptance per draft position',
    'Prefix-cache hit rate',
    'Diagnosis: symptom → likely cause → knob',
    'KV usage % per DP rank',
    'Batch size per DP rank: average and p99',
  ]) {
    await expect(page.getByText(title, { exact: true })).toBeVisible();
  }
  // Every panel queries the endpoint only; the Explore links carry the panel's queries.
  await expect(page.getByTestId(testIds.appConfig.metricEnable('ascend-03'))).toBeVisible();
  const bodies = (await queryRequests(page)).slice(1).map((r) => r.data as { queries: Array<{ endpoint?: string }> });
  expect(bodies.length).toBeGreaterThanOrEqual(9);
  expect(bodies.flatMap((b) => b.queries).every((q) => q.endpoint === 'vllm-03')).toBe(true);
  const explore = await page.getByRole('link', { name: 'Explore' }).first().getAttribute('href');
  expect(decodeURIComponent(explore ?? '')).toContain('"endpoint":"vllm-03"');
});

test("an Ascend endpoint's page switches its own deployment's profiler metrics", async ({ mount, page }) => {
  await mount(<AppStory path={`${base}/endpoint/vllm-03?var-ds=vllm`} />, hooks(4, { routes: profiler }));
  const toggle = page.getByTestId(testIds.appConfig.metricEnable('ascend-03'));
  await expect(toggle).not.toBeChecked();
  await expect(page.getByTestId(testIds.appConfig.metricEnable('ascend-07'))).toHaveCount(0);
  await toggle.check({ force: true });
  await expect(toggle).toBeChecked();
  const put = (await requests(page)).find((r) => r.method === 'PUT');
  expect(put?.url).toContain('/profiler-configs/ascend-03/metric-enable');
});

test("an Ascend endpoint behind a profiler agent shows the agent's switch instead", async ({ mount, page }) => {
  const agent = {
    [`GET ${resources}/profiler-configs`]: {
      profilerConfigs: [file('ascend-07', 'vllm-07')],
      canWrite: true,
      allowEditorsToWrite: false,
    },
    [`GET ${resources}/agents`]: {
      agents: [
        {
          name: 'ascend-03-agent',
          url: 'https://vllm-03:9443',
          metricsUrl: 'http://127.0.0.1:8000/vllm-03/metrics',
          config: { path: '/profiler/ms_service_profiler_config.json', exists: true, metricEnable: 0, enable: 0 },
          exposed: false,
          profile: { available: true, running: false, maxSeconds: 300 },
        },
        {
          name: 'other-agent',
          url: 'https://vllm-09:9443',
          metricsUrl: 'http://127.0.0.1:8000/vllm-09/metrics',
          exposed: null,
        },
      ],
      canWrite: true,
      canProfile: true,
      maxProfileSeconds: 600,
      maxTraceBytes: 67108864,
    },
    [`PUT ${resources}/agents/ascend-03-agent/metric-enable`]: {
      path: '/profiler/ms_service_profiler_config.json',
      exists: true,
      metricEnable: 1,
      enable: 0,
    },
  };
  await mount(<AppStory path={`${base}/endpoint/vllm-03?var-ds=vllm`} />, hooks(4, { routes: agent }));
  const toggle = page.getByTestId(testIds.appConfig.agentMetricEnable('ascend-03-agent'));
  await expect(toggle).not.toBeChecked();
  await expect(page.getByTestId(testIds.appConfig.agentRow('other-agent'))).toHaveCount(0);
  await expect(page.getByTestId(testIds.appConfig.profilerConfigs)).toHaveCount(0); // no file for this deployment
  await toggle.check({ force: true });
  await expect(toggle).toBeChecked();
  const put = (await requests(page)).find((r) => r.method === 'PUT');
  expect(put?.url).toContain('/agents/ascend-03-agent/metric-enable');
});

test('a Viewer sees the switch but cannot use it', async ({ mount, page }) => {
  const readOnly = {
    ...profiler,
    [`GET ${resources}/profiler-configs`]: { ...profiler[`GET ${resources}/profiler-configs`], canWrite: false },
  };
  await mount(
    <AppStory path={`${base}/endpoint/vllm-03?var-ds=vllm`} />,
    hooks(4, { routes: readOnly, role: 'Viewer' })
  );
  await expect(page.getByTestId(testIds.appConfig.metricEnable('ascend-03'))).toBeDisabled();
});

test('a non-Ascend endpoint has no per-DP views', async ({ mount, page }) => {
  await mount(<AppStory path={`${base}/endpoint/vllm-01?var-ds=vllm`} />, hooks(4));
  await expect(page.getByText('Prefix-cache hit rate', { exact: true })).toBeVisible();
  await expect(page.getByText('KV usage % per DP rank', { exact: true })).toHaveCount(0);
});

test('the models tab groups by model_name and drills down to a model page', async ({ mount, page }) => {
  await mount(<AppStory path={`${base}/models?var-ds=vllm`} />, hooks(4));
  const table = page.getByTestId(testIds.fleet.table('model'));
  await expect(table.getByRole('row')).toHaveCount(3);
  const [query] = await queryRequests(page);
  const groups = (query.data as { queries: Array<{ groupBy?: string }> }).queries.map((q) => q.groupBy);
  expect(groups).toContain('model');
  await page.getByTestId(testIds.fleet.link('llama-3-8b')).click();
  await expect.poll(() => new URL(page.url()).pathname).toBe(`${base}/model/llama-3-8b`);
  await expect(page.getByText('Latency: p95 TTFT and p95 TPOT', { exact: true })).toBeVisible();
  const later = (await queryRequests(page)).slice(1).map((r) => r.data as { queries: Array<{ model?: string }> });
  expect(later.flatMap((b) => b.queries).every((q) => q.model === 'llama-3-8b')).toBe(true);
});

test('64 endpoints: one QueryData round trip per refresh', async ({ mount, page }) => {
  await mount(<AppStory path={base} />, hooks(64));
  const table = page.getByTestId(testIds.fleet.table('endpoint'));
  await expect(table.getByRole('row')).toHaveCount(65);
  await page.waitForTimeout(500);
  expect(await queryRequests(page)).toHaveLength(1);
  // The refresh button reruns the one query.
  await page.getByTestId('data-testid RefreshPicker run button').click();
  await expect.poll(async () => (await queryRequests(page)).length).toBe(2);
  await page.waitForTimeout(500);
  expect(await queryRequests(page)).toHaveLength(2);
});

test('the pages in Chinese (zh-Hans)', async ({ mount, page }) => {
  await mount(<AppStory path={base} />, hooks(4, { language: 'zh-Hans' }));
  const table = page.getByTestId(testIds.fleet.table('endpoint'));
  await expect(table.getByRole('columnheader', { name: '端点' })).toBeVisible();
  await expect(table.getByText('休眠')).toBeVisible();
});

test("the fleet page opens with each model's service status, from the same one round trip", async ({ mount, page }) => {
  await mount(<AppStory path={base} />, hooks(4));
  const strip = page.getByTestId(testIds.status.strip);
  // simFleet(4): llama-3-8b serves (vllm-03 online beside the unhealthy vllm-01); qwen2-72b's live endpoint sleeps.
  const llama = strip.getByTestId(testIds.status.card('llama-3-8b'));
  await expect(llama.getByText('online', { exact: true })).toBeVisible();
  await expect(
    strip.getByTestId(testIds.status.card('qwen2-72b')).getByText('sleeping', { exact: true })
  ).toBeVisible();
  // Median TTFT 110 ms, 1 ÷ 21 ms = 48 tok/s, 99.0 % success, 3.1 requests/s = 186 a minute (src/ct/fleet.ts).
  for (const text of ['110 ms', '48', '99.0 %', '186']) {
    await expect(llama.getByText(text, { exact: true })).toBeVisible();
  }
  await page.waitForTimeout(500);
  expect(await queryRequests(page)).toHaveLength(1);
});

for (const theme of THEMES) {
  test(`screenshot: fleet, ${theme}`, async ({ mount, page }) => {
    await page.setViewportSize({ width: 1800, height: 800 }); // every column in view
    // The catalog's picture: a healthy fleet with one realistic problem (src/ct/fleet.ts, showcaseFleet).
    await mount(<AppStory path={base} />, hooks(10, { theme, showcase: true }));
    await expect(page.getByTestId(testIds.fleet.table('endpoint')).getByRole('row')).toHaveCount(11);
    await screenshot(page, `fleet-${theme}`);
  });

  test(`screenshot: service status, ${theme}`, async ({ mount, page }) => {
    await page.setViewportSize({ width: 1400, height: 800 });
    await mount(<AppStory path={base} />, hooks(10, { theme, showcase: true }));
    const strip = page.getByTestId(testIds.status.strip);
    await expect(strip.getByText('online', { exact: true })).toHaveCount(2);
    await screenshotOf(strip, `service-status-${theme}`);
  });

  test(`screenshot: endpoint, ${theme}`, async ({ mount, page }) => {
    await mount(<AppStory path={`${base}/endpoint/vllm-03`} />, hooks(12, { theme, routes: profiler }));
    await expect(page.getByText('KV usage % per DP rank', { exact: true })).toBeVisible();
    await screenshot(page, `endpoint-${theme}`);
  });
}
