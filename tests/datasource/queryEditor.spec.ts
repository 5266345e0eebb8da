import { expect, test } from '@grafana/plugin-e2e';
import { testIds } from '../../src/components/testIds';
import { QUERY_TYPES } from '../../src/datasource/types';
import { pickOption } from './helpers';

const DIRECT = 'vLLM (direct)';

for (const type of QUERY_TYPES.filter((t) => t.value !== 'raw' && t.value !== 'promql')) {
  test(`builds a ${type.value} query in a panel`, async ({ panelEditPage, page }) => {
    await panelEditPage.datasource.set(DIRECT);
    const row = panelEditPage.getQueryEditorRow('A');
    await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), type.label);
    await expect(row.getByText(type.description)).toBeVisible();
    await expect(panelEditPage.refreshPanel()).toBeOK();
  });
}

test('builds a latency query with a family, quantiles and a model filter', async ({ panelEditPage, page }) => {
  await panelEditPage.datasource.set(DIRECT);
  const row = panelEditPage.getQueryEditorRow('A');
  await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), 'Latency');
  await pickOption(page, row.getByTestId(testIds.queryEditor.latencyMetric), 'Inter-token latency');
  await row.getByTestId(testIds.queryEditor.quantiles).fill('0.5, 0.99');
  await row.getByTestId(testIds.queryEditor.quantiles).blur();
  await row.getByTestId(testIds.queryEditor.model).click();
  await page.getByRole('option').first().click();
  await expect(panelEditPage.refreshPanel()).toBeOK();
});

test('builds a DP balance query on a rank-load measure', async ({ panelEditPage, page }) => {
  await panelEditPage.datasource.set(DIRECT);
  const row = panelEditPage.getQueryEditorRow('A');
  await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), 'DP balance');
  await expect(row.getByText('Rank load measure')).toBeVisible();
  await pickOption(page, row.getByTestId(testIds.queryEditor.measure), 'KV usage');
  await expect(panelEditPage.refreshPanel()).toBeOK();
});

test('builds a capacity query and validates the headroom', async ({ panelEditPage, page }) => {
  await panelEditPage.datasource.set(DIRECT);
  const row = panelEditPage.getQueryEditorRow('A');
  await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), 'Capacity');
  await row.getByTestId(testIds.queryEditor.headroom).fill('0.95');
  await row.getByTestId(testIds.queryEditor.headroom).blur();
  await expect(row.getByText('Headroom must be between 0 and 0.9.')).toBeVisible();
  await row.getByTestId(testIds.queryEditor.headroom).fill('0.2');
  await row.getByTestId(testIds.queryEditor.headroom).blur();
  await expect(panelEditPage.refreshPanel()).toBeOK();
});

test('builds a raw query from the metric list with a label filter', async ({ panelEditPage, page }) => {
  await panelEditPage.datasource.set(DIRECT);
  const row = panelEditPage.getQueryEditorRow('A');
  await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), 'Raw metric');
  await expect(row.getByText('Raw queries need a metric name.')).toBeVisible();
  await pickOption(page, row.getByTestId(testIds.queryEditor.rawMetric), 'vllm:num_requests_running');
  await row.getByTestId(testIds.queryEditor.addLabel).click();
  await row.getByTestId(testIds.queryEditor.labelName(0)).fill('engine');
  await row.getByTestId(testIds.queryEditor.labelName(0)).blur();
  await row.getByTestId(testIds.queryEditor.labelValue(0)).click();
  await page.getByRole('option').first().click();
  await expect(panelEditPage.refreshPanel()).toBeOK();
});

test('builds a PromQL query in Prometheus mode and shows the executed query', async ({ panelEditPage, page }) => {
  await panelEditPage.datasource.set('vLLM (Prometheus)');
  const row = panelEditPage.getQueryEditorRow('A');
  await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), 'KV-cache usage');
  await expect(panelEditPage.refreshPanel()).toBeOK();
  await expect(row.getByTestId(testIds.queryEditor.executedQuery)).toContainText('PromQL run by Prometheus mode');

  await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), 'PromQL');
  const editor = row.getByTestId(testIds.queryEditor.expr).getByRole('textbox');
  await editor.click();
  await page.keyboard.type('sum(vllm:num_requests_running)');
  await row.getByTestId(testIds.queryEditor.legendFormat).click();
  await expect(panelEditPage.refreshPanel()).toBeOK();
});

test('the query editor works in Explore', async ({ explorePage, page }) => {
  await explorePage.datasource.set(DIRECT);
  const row = explorePage.getQueryEditorRow('A');
  await pickOption(page, row.getByTestId(testIds.queryEditor.queryType), 'Queue');
  await expect(explorePage.runQuery()).toBeOK();
});

test('a query variable lists models', async ({ variableEditPage, page }) => {
  await variableEditPage.setVariableType('Query');
  await variableEditPage.datasource.set(DIRECT);
  await page.getByTestId(testIds.variableEditor.resource).getByText('Models').click();
  await variableEditPage.runQuery();
  await expect(page.getByTestId(testIds.variableEditor.preview)).toContainText('value(s)');
});
