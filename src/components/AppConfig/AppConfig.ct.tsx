import React from 'react';
import { expect, test } from '@playwright/experimental-ct-react';
import type { HooksConfig } from '../../ct/backend';
import { requests, screenshot, THEMES } from '../../ct/helpers';
import { AppConfigStory, OverviewStory } from '../../ct/stories';
import { DASHBOARDS } from '../../constants';
import { testIds } from '../testIds';

const base = '/api/plugins/inferscope-vllm-app/resources';
const file = {
  name: 'ascend-dp2',
  path: '/var/lib/inferscope/ascend/ms_service_profiler_config.json',
  metricsUrl: 'http://vllm-ascend-dp2:8000/metrics',
  exists: true,
  metricEnable: 0,
  enable: 1,
  modified: '2026-11-22T05:00:00Z',
  exposed: false,
};
const routes = {
  [`${base}/status`]: { pluginId: 'inferscope-vllm-app', version: '0.1.0' },
  [`GET ${base}/profiler-configs`]: {
    profilerConfigs: [
      file,
      { ...file, name: 'broken', error: 'malformed profiler config: unexpected end of JSON input' },
    ],
    canWrite: true,
    allowEditorsToWrite: false,
  },
  [`PUT ${base}/profiler-configs/ascend-dp2/metric-enable`]: {
    ...file,
    metricEnable: 1,
    exposed: true,
    profilingFamilies: 12,
  },
  [`GET ${base}/agents`]: {
    agents: [
      {
        name: 'ascend-k8s',
        url: 'https://vllm-ascend-0.inference:9443',
        metricsUrl: 'http://vllm-ascend-0.inference:8000/metrics',
        config: {
          path: '/profiler/ms_service_profiler_config.json',
          exists: true,
          metricEnable: 1,
          enable: 0,
          modified: '2026-11-23T04:10:00Z',
        },
        exposed: true,
        profilingFamilies: 13,
        profile: { available: true, running: false, maxSeconds: 300, lastStopped: '2026-11-23T04:20:00Z' },
      },
      {
        name: 'ascend-edge',
        url: 'https://10.0.7.12:9443',
        exposed: null,
        configError:
          'agent ascend-edge: the agent is unreachable: https://10.0.7.12:9443: dial tcp 10.0.7.12:9443: connect: connection refused',
        profileError: 'agent ascend-edge: the agent is unreachable',
      },
    ],
    canWrite: true,
    canProfile: true,
    maxProfileSeconds: 600,
    maxTraceBytes: 67108864,
  },
  [`GET ${base}/agents/ascend-k8s/symbols`]: {
    path: '/profiler-symbols/service_metrics_symbols.yaml',
    exists: true,
    vllmVersion: '0.11.0',
    restartNeeded: true,
    entries: [
      {
        symbol: 'vllm.entrypoints.openai.serving_chat:OpenAIServingChat.create_chat_completion',
        minVersion: '0.9.1',
        line: 1,
        metrics: [{ name: 'server:create_chat_completion:duration', type: 'timer' }],
      },
      {
        symbol: 'vllm.v1.engine.core:EngineCore.step',
        minVersion: '0.12.0',
        line: 6,
        metrics: [{ name: 'engine:step:duration', type: 'timer' }],
      },
    ],
    problems: [
      {
        entry: 1,
        line: 6,
        severity: 'warning',
        message: 'vLLM 0.11.0 is older than min_version 0.12.0: the profiler skips this entry',
      },
    ],
    exposed: {
      'vllm_profiling_server:create_chat_completion:duration': true,
      'vllm_profiling_engine:step:duration': false,
    },
  },
  [`POST ${base}/agents/ascend-k8s/profile`]: { available: true, running: true, maxSeconds: 300 },
};

test('an Admin switches metric_enable on through the backend', async ({ mount, page }) => {
  await mount<HooksConfig>(<AppConfigStory />, { hooksConfig: { role: 'Admin', routes } });
  const toggle = page.getByTestId(testIds.appConfig.metricEnable('ascend-dp2'));
  await expect(toggle).not.toBeChecked();
  await expect(page.getByTestId(testIds.appConfig.metricEnable('broken'))).toBeDisabled();
  await toggle.check({ force: true });
  await expect(toggle).toBeChecked();
  // The deployment rereads the file on its own poll: exposure stays as last read until the list is refreshed.
  await expect(page.getByTestId(testIds.appConfig.exposed('ascend-dp2'))).toContainText('not exposed');
  const put = (await requests(page)).find((r) => r.method === 'PUT');
  expect(put?.url).toContain('/profiler-configs/ascend-dp2/metric-enable');
});

test('a Viewer sees the switches but cannot use them', async ({ mount, page }) => {
  await mount<HooksConfig>(<AppConfigStory />, { hooksConfig: { role: 'Viewer', routes } });
  await expect(page.getByTestId(testIds.appConfig.readOnly)).toBeVisible();
  await expect(page.getByTestId(testIds.appConfig.metricEnable('ascend-dp2'))).toBeDisabled();
});

test("an Admin checks an agent's symbols file and starts a torch profile; an unreachable agent says why", async ({
  mount,
  page,
}) => {
  await mount<HooksConfig>(<AppConfigStory />, { hooksConfig: { role: 'Admin', routes } });
  await expect(page.getByTestId(testIds.appConfig.agentError('ascend-edge'))).toContainText('connection refused');
  await expect(page.getByTestId(testIds.appConfig.agentMetricEnable('ascend-edge'))).toBeDisabled();
  await expect(page.getByTestId(testIds.appConfig.agentProfiler('ascend-edge'))).toHaveCount(0);
  await page.getByTestId(testIds.appConfig.agentSymbolsCheck('ascend-k8s')).click();
  const symbols = page.getByTestId(testIds.appConfig.agentSymbols('ascend-k8s'));
  await expect(symbols.getByRole('row').nth(2)).toContainText('older than min_version 0.12.0');
  await expect(symbols.getByRole('row').nth(1)).toContainText('on /metrics');
  await page.getByTestId(testIds.appConfig.agentProfiler('ascend-k8s')).getByRole('spinbutton').fill('20');
  await page.getByTestId(testIds.appConfig.agentProfileStart('ascend-k8s')).click();
  const post = (await requests(page)).find((r) => r.method === 'POST' && r.url.endsWith('/agents/ascend-k8s/profile'));
  expect(post?.data).toEqual({ seconds: 20 });
});

test('the overview page names the dashboards and the backend version', async ({ mount, page }) => {
  await mount<HooksConfig>(<OverviewStory />, { hooksConfig: { routes } });
  await expect(page.getByText(/version 0\.1\.0 is answering/)).toBeVisible();
  // One link per dashboard plugin.json ships.
  await expect(page.getByTestId(testIds.overview.dashboards).getByRole('link')).toHaveCount(DASHBOARDS.length);
});

for (const theme of THEMES) {
  test(`screenshot: app config, ${theme}`, async ({ mount, page }) => {
    await mount<HooksConfig>(<AppConfigStory />, { hooksConfig: { role: 'Admin', routes, theme } });
    await expect(page.getByTestId(testIds.appConfig.profilerRow('ascend-dp2'))).toBeVisible();
    await screenshot(page, `app-config-${theme}`);
  });
  test(`screenshot: profiler agents, ${theme}`, async ({ mount, page }) => {
    await mount<HooksConfig>(<AppConfigStory />, { hooksConfig: { role: 'Admin', routes, theme } });
    await page.getByTestId(testIds.appConfig.agentSymbolsCheck('ascend-k8s')).click();
    await expect(page.getByTestId(testIds.appConfig.agentSymbols('ascend-k8s'))).toBeVisible();
    await screenshot(page, `app-agents-${theme}`);
  });
  test(`screenshot: overview, ${theme}`, async ({ mount, page }) => {
    await mount<HooksConfig>(<OverviewStory />, { hooksConfig: { routes, theme } });
    await expect(page.getByText(/version 0\.1\.0 is answering/)).toBeVisible();
    await screenshot(page, `overview-${theme}`);
  });
}
