import React from 'react';
import { expect, test } from '@playwright/experimental-ct-react';
import catalog from '../catalog.json';
import editorQueries from '../testdata/editor_queries.json';
import type { HooksConfig } from '../../ct/backend';
import { offers, pick, screenshot, state, THEMES } from '../../ct/helpers';
import { QueryEditorStory } from '../../ct/stories';
import type { VllmQuery } from '../types';

const routes = {
  '/resources/models': ['llama-3-8b', 'Qwen2.5-7B'],
  '/resources/engines': ['0', '1', '2', '3'],
  '/resources/roles': ['decode', 'prefill', 'unified'],
  '/resources/endpoints': [{ name: 'v1-dp4' }, { name: 'ascend-dp2' }],
  '/resources/metrics': ['vllm:num_requests_running', 'vllm_profiling_forward:duration'],
  '/resources/label-values': ['stop', 'length'],
};

type Story = { query: VllmQuery; runs: number };

test('every query type, picked from the real Combobox, offers its catalog measures', async ({ mount, page }) => {
  await mount<HooksConfig>(<QueryEditorStory initial={{ queryType: 'kv_cache_usage' }} />, { hooksConfig: { routes } });
  const typePicker = page.getByRole('combobox', { name: 'Query type' });
  for (const t of catalog.types) {
    await pick(page, typePicker, t.label);
    await expect(page.getByText(t.description)).toBeVisible();
    expect((await state<Story>(page)).query.queryType).toBe(t.value);
    const measures = catalog.measures[t.value as keyof typeof catalog.measures].options;
    const measurePicker = page.getByRole('combobox', { name: /^(Measure|Rank load measure)$/ });
    if (measures.length < 2) {
      await expect(measurePicker).toHaveCount(0);
      continue;
    }
    for (const m of measures) {
      expect(await offers(page, measurePicker, m.label), `${t.value} offers ${m.label}`).toBe(true);
    }
  }
});

test('a measure and a latency family are picked, quantiles commit on blur', async ({ mount, page }) => {
  await mount<HooksConfig>(<QueryEditorStory initial={{ queryType: 'latency' }} />, { hooksConfig: { routes } });
  await pick(page, page.getByRole('combobox', { name: 'Latency metric' }), 'Inter-token latency');
  const quantiles = page.getByLabel('Quantiles');
  await quantiles.fill('0.5, 0.99');
  expect((await state<Story>(page)).query.quantiles).toBeUndefined(); // nothing runs while typing
  await quantiles.blur();
  await expect
    .poll(async () => (await state<Story>(page)).query)
    .toMatchObject({ metric: 'itl', quantiles: [0.5, 0.99] });
  await quantiles.fill('0.5, abc');
  await quantiles.press('Enter');
  await expect(page.getByText('Quantiles must be numbers such as 0.5, 0.9, 0.99.')).toBeVisible();
  // The profiler timers the data source found are offered as families too.
  expect(
    await offers(page, page.getByRole('combobox', { name: 'Latency metric' }), 'vllm_profiling_forward:duration')
  ).toBe(true);
});

// The query the editor produces is in testdata/editor_queries.json, which a Go test (pkg/query editor_test.go)
// answers over the synthetic fleet: Goodput with a threshold returns data.
test('Goodput shows and checks the SLO target, and the query it builds returns data', async ({ mount, page }) => {
  await mount<HooksConfig>(<QueryEditorStory initial={{ queryType: 'latency' }} />, { hooksConfig: { routes } });
  await pick(page, page.getByRole('combobox', { name: 'Measure' }), 'Goodput');
  const threshold = page.getByLabel('SLO target');
  await expect(threshold).toBeVisible();
  await expect(page.getByText('The SLO target must be a positive number of seconds.')).toBeVisible();
  await threshold.fill('0.5');
  await threshold.blur();
  await expect.poll(async () => (await state<Story>(page)).query).toEqual(editorQueries.goodput);
  await expect(page.getByText('The SLO target must be a positive number of seconds.')).toHaveCount(0);
});

for (const [queryType, measure] of [
  ['kv_transfer', 'latency'],
  ['kv_transfer', 'pd_ttft'],
  ['cache', 'residency'],
] as const) {
  test(`${queryType}/${measure} reads quantiles, and the editor sets them`, async ({ mount, page }) => {
    await mount<HooksConfig>(<QueryEditorStory initial={{ queryType, measure }} />, { hooksConfig: { routes } });
    const quantiles = page.getByLabel('Quantiles');
    await quantiles.fill('0.5, 0.99');
    await quantiles.blur();
    await expect.poll(async () => (await state<Story>(page)).query.quantiles).toEqual([0.5, 0.99]);
  });
}

test('filters list what the data source has seen, and dashboard variables', async ({ mount, page }) => {
  await mount<HooksConfig>(<QueryEditorStory initial={{ queryType: 'queue' }} />, { hooksConfig: { routes } });
  const model = page.getByRole('combobox', { name: 'Model' });
  for (const m of ['llama-3-8b', 'Qwen2.5-7B', '$model']) {
    expect(await offers(page, model, m), m).toBe(true);
  }
  await pick(page, model, 'llama-3-8b');
  await expect.poll(async () => (await state<Story>(page)).query.model).toBe('llama-3-8b');
  await page.getByRole('radio', { name: 'Fleet' }).click();
  await expect.poll(async () => (await state<Story>(page)).query.groupBy).toBe('fleet');
  // Prefill/decode roles: the roles the data source found, and grouping by role.
  const role = page.getByRole('combobox', { name: 'Role' });
  expect(await offers(page, role, 'prefill')).toBe(true);
  await pick(page, role, 'decode');
  await expect.poll(async () => (await state<Story>(page)).query.role).toBe('decode');
  await page.getByRole('radio', { name: 'Role' }).click();
  await expect.poll(async () => (await state<Story>(page)).query.groupBy).toBe('role');
});

test('a resource that fails says so beside its picker', async ({ mount, page }) => {
  await mount<HooksConfig>(<QueryEditorStory initial={{ queryType: 'queue' }} />, {
    hooksConfig: { routes: { ...routes, '/resources/models': { __status: 502, error: 'Prometheus answered 503' } } },
  });
  await expect(page.getByText(/Could not list values/)).toBeVisible();
});

for (const theme of THEMES) {
  test(`screenshot: query editor, ${theme}`, async ({ mount, page }) => {
    await mount<HooksConfig>(
      <QueryEditorStory
        initial={{ queryType: 'latency', metric: 'ttft', quantiles: [0.5, 0.95, 0.99], groupBy: 'endpoint' }}
      />,
      { hooksConfig: { routes, theme } }
    );
    await expect(page.getByRole('combobox', { name: 'Query type' })).toHaveValue('Latency');
    await screenshot(page, `query-editor-${theme}`);
  });
}

// Its screenshot needs a CJK font in the browser's machine (Debian's fonts-noto-cjk), or the Chinese shows as boxes.
test('in Chinese, the editor reads from the zh-Hans locale file, catalog entries included', async ({ mount, page }) => {
  await mount<HooksConfig>(<QueryEditorStory initial={{ queryType: 'latency', metric: 'ttft' }} />, {
    hooksConfig: { routes, language: 'zh-Hans' },
  });
  await expect(page.getByRole('combobox', { name: '查询类型' })).toHaveValue('延迟');
  await expect(page.getByText('TTFT、token 间延迟、端到端和排队时间的分位数。')).toBeVisible();
  await expect(page.getByRole('combobox', { name: '延迟指标' })).toHaveValue('首 token 时间');
  await expect(page.getByText('以逗号分隔，取值 0 到 1。留空 = 0.5, 0.9, 0.95, 0.99。')).toBeVisible();
  await screenshot(page, 'query-editor-zh-Hans');
});
