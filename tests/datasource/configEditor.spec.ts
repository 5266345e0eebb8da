import { expect, test } from '@grafana/plugin-e2e';

test('provisioned direct-mode data source passes Save & test', async ({ gotoDataSourceConfigPage, readProvisionedDataSource }) => {
  const ds = await readProvisionedDataSource({ fileName: 'datasources.yaml', name: 'vLLM (direct)' });
  const configPage = await gotoDataSourceConfigPage(ds.uid);
  await expect(configPage.saveAndTest()).toBeOK();
});
