import React from 'react';
import { expect, test } from '@playwright/experimental-ct-react';
import type { HooksConfig } from '../../ct/backend';
import { requests, screenshot, state, THEMES } from '../../ct/helpers';
import { ConfigEditorStory } from '../../ct/stories';
import type { VllmOptions } from '../types';

type Settings = { jsonData: VllmOptions; url: string; basicAuth: boolean };

const probe = {
  up: true,
  samples: 4312,
  detection: { flavor: 'vllm-v1', ranks: ['0', '1', '2', '3'], rankLabel: 'engine', specDecode: true },
};
const statuses = [
  { name: 'v1-dp4', url: 'http://v1-dp4:8000/metrics', up: true, samples: 4312, detection: probe.detection },
  { name: 'ascend-dp2', url: 'http://ascend:8000/metrics', up: false, error: 'connection refused' },
];

test('direct mode: an endpoint is typed, tested through the probe resource and saved in jsonData', async ({
  mount,
  page,
}) => {
  await mount<HooksConfig>(<ConfigEditorStory saved jsonData={{ mode: 'direct', endpoints: [{ url: '' }] }} />, {
    hooksConfig: { routes: { 'POST /resources/probe': probe, '/resources/endpoints': statuses } },
  });
  await page.getByLabel('Endpoint 1 URL').fill('http://v1-dp4:8000/metrics');
  await page.getByLabel('Endpoint 1 name').fill('v1-dp4');
  await page.getByRole('button', { name: 'Test endpoint 1' }).click();
  await expect(page.getByText(/^Up: .*4312 samples/)).toBeVisible();
  const probeCall = (await requests(page)).find((r) => r.url.endsWith('/resources/probe'));
  expect(probeCall?.data).toEqual({ url: 'http://v1-dp4:8000/metrics' }); // no stored credentials to an unsaved URL
  expect((await state<Settings>(page)).jsonData.endpoints).toEqual([
    { url: 'http://v1-dp4:8000/metrics', name: 'v1-dp4' },
  ]);
  // The saved data source's health, from the endpoints resource.
  await expect(page.getByText(/ascend-dp2:.*down — connection refused/)).toBeVisible();
  await expect(page.getByText(/v1-dp4:.*up — /)).toBeVisible();
});

test('direct mode: a Kubernetes discovery source is set up, and discovered and departed endpoints are shown', async ({
  mount,
  page,
}) => {
  const discovered = [
    { name: 'vllm-00', up: true, source: 'llm-d', role: 'prefill', detection: probe.detection },
    { name: 'vllm-07', up: false, gone: true, source: 'llm-d', goneSince: '2026-11-26T21:00:00Z' },
  ];
  await mount<HooksConfig>(<ConfigEditorStory saved jsonData={{ mode: 'direct' }} />, {
    hooksConfig: { routes: { '/resources/endpoints': discovered } },
  });
  await page.getByRole('button', { name: 'Add discovery source' }).click();
  await expect(
    page.getByText('Discovery source 1 needs its DNS name and port (SRV records carry their port).')
  ).toBeVisible();
  await page.getByLabel('Kubernetes').click();
  await page.getByLabel('Source 1 name').fill('llm-d');
  await page.getByLabel('Namespaces (comma-separated; empty: all)').fill('llm');
  await page.getByLabel('Label selector').fill('llm-d.ai/inferenceServing=true');
  await page.getByLabel('Port', { exact: true }).fill('8000');
  await page.getByLabel('Role label').fill('llm-d.ai/role');
  await expect(page.getByText(/Discovery source 1 needs/)).toHaveCount(0);
  await expect
    .poll(async () => (await state<Settings>(page)).jsonData.discovery)
    .toEqual([
      {
        type: 'kubernetes',
        name: 'llm-d',
        namespaces: ['llm'],
        labelSelector: 'llm-d.ai/inferenceServing=true',
        port: 8000,
        roleLabel: 'llm-d.ai/role',
      },
    ]);
  await expect(page.getByText(/vllm-00: up — .*found by llm-d, role prefill from its label/)).toBeVisible();
  await expect(page.getByText(/vllm-07: gone from llm-d — history kept, not scraped/)).toBeVisible();
});

test('direct mode: settings commit when the field is left, and bad ones are explained', async ({ mount, page }) => {
  await mount<HooksConfig>(
    <ConfigEditorStory jsonData={{ mode: 'direct', endpoints: [{ url: 'http://a:8000/metrics' }] }} />
  );
  const interval = page.getByLabel('Scrape interval');
  await interval.fill('10x');
  await interval.blur();
  await expect.poll(async () => (await state<Settings>(page)).jsonData.scrapeInterval).toBe('10x');
  await expect(page.getByText('Use a duration such as 5s or 1m.')).toBeVisible();
  const memory = page.getByLabel('Memory cap (MB)');
  await memory.fill('1024');
  await memory.press('Enter');
  await expect.poll(async () => (await state<Settings>(page)).jsonData.maxMemoryMB).toBe(1024);
});

test("Prometheus mode: Grafana's connection and auth components", async ({ mount, page }) => {
  await mount<HooksConfig>(<ConfigEditorStory jsonData={{ mode: 'prometheus' }} />);
  for (const section of ['Connection', 'Authentication', 'TLS settings', 'HTTP headers', 'Advanced HTTP settings']) {
    await expect(page.getByText(section, { exact: true })).toBeVisible();
  }
  await expect(page.getByLabel('Add endpoint')).toHaveCount(0);
  await page.getByRole('combobox', { name: /Authentication method/ }).click();
  await page.getByText('Basic authentication', { exact: true }).click();
  await expect.poll(async () => (await state<Settings>(page)).basicAuth).toBe(true);
  await expect(page.getByPlaceholder(/user/i).first()).toBeVisible();
});

for (const theme of THEMES) {
  test(`screenshot: config editor, ${theme}`, async ({ mount, page }) => {
    await mount<HooksConfig>(
      <ConfigEditorStory
        saved
        jsonData={{
          mode: 'direct',
          endpoints: [
            { url: 'http://v1-dp4:8000/metrics', name: 'v1-dp4' },
            { url: 'http://ascend:8000/metrics', name: 'ascend-dp2' },
          ],
          scrapeInterval: '5s',
        }}
      />,
      { hooksConfig: { theme, routes: { '/resources/endpoints': statuses } } }
    );
    await expect(page.getByText(/ascend-dp2:.*down/)).toBeVisible();
    await screenshot(page, `config-editor-${theme}`);
  });
}

test('Prometheus mode: the scrape interval placeholder is the real default', async ({ mount, page }) => {
  await mount<HooksConfig>(<ConfigEditorStory jsonData={{ mode: 'prometheus' }} />);
  await expect(page.getByLabel('Scrape interval')).toHaveAttribute('placeholder', '5s');
});
