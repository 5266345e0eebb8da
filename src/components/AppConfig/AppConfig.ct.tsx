import React from 'react';
import { expect, test } from '@playwright/experimental-ct-react';
import type { HooksConfig } from '../../ct/backend';
import { requests, screenshot, THEMES } from '../../ct/helpers';
import { AppConfigStory, OverviewStory } from '../../ct/stories';
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

test('the overview page names the dashboards and the backend version', async ({ mount, page }) => {
  await mount<HooksConfig>(<OverviewStory />, { hooksConfig: { routes } });
  await expect(page.getByText(/version 0\.1\.0 is answering/)).toBeVisible();
  await expect(page.getByTestId(testIds.overview.dashboards).getByRole('link')).toHaveCount(4);
});

for (const theme of THEMES) {
  test(`screenshot: app config, ${theme}`, async ({ mount, page }) => {
    await mount<HooksConfig>(<AppConfigStory />, { hooksConfig: { role: 'Admin', routes, theme } });
    await expect(page.getByTestId(testIds.appConfig.profilerRow('ascend-dp2'))).toBeVisible();
    await screenshot(page, `app-config-${theme}`);
  });
  test(`screenshot: overview, ${theme}`, async ({ mount, page }) => {
    await mount<HooksConfig>(<OverviewStory />, { hooksConfig: { routes, theme } });
    await expect(page.getByText(/version 0\.1\.0 is answering/)).toBeVisible();
    await screenshot(page, `overview-${theme}`);
  });
}
