import { expect, test } from '@grafana/plugin-e2e';
import { testIds } from '../../src/components/testIds';
import { VllmOptions } from '../../src/datasource/types';

test('provisioned direct-mode data source passes Save & test', async ({
  gotoDataSourceConfigPage,
  readProvisionedDataSource,
}) => {
  const ds = await readProvisionedDataSource({ fileName: 'datasources.yaml', name: 'vLLM (direct)' });
  const configPage = await gotoDataSourceConfigPage(ds.uid);
  await expect(configPage.saveAndTest()).toBeOK();
});

test('provisioned direct-mode data source shows per-endpoint health', async ({
  gotoDataSourceConfigPage,
  readProvisionedDataSource,
  page,
}) => {
  const ds = await readProvisionedDataSource<VllmOptions>({ fileName: 'datasources.yaml', name: 'vLLM (direct)' });
  await gotoDataSourceConfigPage(ds.uid);
  await expect(page.getByTestId(testIds.configEditor.endpointStatus)).toContainText('v1-dp4: up');
  await page.getByTestId(testIds.configEditor.testEndpoint(0)).click();
  await expect(page.getByTestId(testIds.configEditor.endpointMessage(0))).toContainText('Up:');
});

test('a new direct-mode data source is configured from the editor', async ({ createDataSourceConfigPage, page }) => {
  const configPage = await createDataSourceConfigPage({ type: 'inferscope-vllm-datasource' });
  await page.getByLabel('Direct').check({ force: true });
  await page.getByTestId(testIds.configEditor.addEndpoint).click();
  await page.getByTestId(testIds.configEditor.endpointUrl(0)).fill('vllm-v1-dp4:8000/metrics');
  await expect(page.getByTestId(testIds.configEditor.endpointMessage(0))).toContainText('not an http(s) URL');
  await page.getByTestId(testIds.configEditor.endpointUrl(0)).fill('http://vllm-v1-dp4:8000/metrics');
  await page.getByTestId(testIds.configEditor.endpointName(0)).fill('v1-dp4');
  await page.getByTestId(testIds.configEditor.scrapeInterval).fill('500ms');
  await expect(page.getByText('The scrape interval must be at least 1s.')).toBeVisible();
  await page.getByTestId(testIds.configEditor.scrapeInterval).fill('5s');
  await page.getByTestId(testIds.configEditor.bearerToken).fill('not-needed');
  await expect(configPage.saveAndTest()).toBeOK();
  // Once saved, the secret only shows as configured.
  await expect(page.getByTestId(testIds.configEditor.bearerToken)).toHaveValue('configured');
});

test('a direct-mode data source with a bad endpoint fails Save & test with the endpoint named', async ({
  createDataSourceConfigPage,
  page,
}) => {
  const configPage = await createDataSourceConfigPage({ type: 'inferscope-vllm-datasource' });
  await page.getByTestId(testIds.configEditor.addEndpoint).click();
  await page.getByTestId(testIds.configEditor.endpointUrl(0)).fill('http://nothing-here:8000/metrics');
  await page.getByTestId(testIds.configEditor.endpointName(0)).fill('ghost');
  await expect(configPage.saveAndTest()).not.toBeOK();
  await expect(configPage).toHaveAlert('error', { hasText: 'ghost' });
});

test("Prometheus mode shows Grafana's HTTP, auth and TLS settings", async ({ createDataSourceConfigPage, page }) => {
  await createDataSourceConfigPage({ type: 'inferscope-vllm-datasource' });
  await page.getByLabel('Prometheus').check({ force: true });
  await expect(page.getByTestId(testIds.configEditor.addEndpoint)).toHaveCount(0);
  await expect(page.getByText('Query a Prometheus-compatible server that scrapes vLLM.')).toBeVisible();
  await expect(page.getByText('Basic auth')).toBeVisible();
  await expect(page.getByText('Forward OAuth Identity')).toBeVisible();
  await expect(page.getByText('Skip TLS Verify')).toBeVisible();
  await expect(page.getByTestId(testIds.configEditor.httpMethod)).toBeVisible();
  await expect(page.getByTestId(testIds.configEditor.scrapeInterval)).toBeVisible();
});
