import { test, expect } from './fixtures';
import { testIds } from '../src/components/testIds';

// The docker-compose stack: the direct-mode data source (the default) scrapes v1-dp4, v0, ascend-dp2 and
// dynamo-worker.

test.describe('app pages', () => {
  test('the fleet lists every endpoint of the default data source and drills down to one', async ({
    gotoPage,
    page,
  }) => {
    await gotoPage('/');
    const table = page.getByTestId(testIds.fleet.table('endpoint'));
    for (const name of ['v1-dp4', 'v0', 'ascend-dp2', 'dynamo-worker']) {
      await expect(table.getByTestId(testIds.fleet.link(name))).toBeVisible({ timeout: 30_000 });
    }
    await table.getByTestId(testIds.fleet.link('ascend-dp2')).click();
    await expect(page).toHaveURL(/\/endpoint\/ascend-dp2/);
    await expect(page.getByText('KV usage % per DP rank', { exact: true })).toBeVisible();
    // The deployment is behind ascend-agent: its switch shows on the endpoint's page.
    await expect(page.getByTestId(testIds.appConfig.agentRow('vllm-ascend-dp2'))).toBeVisible();
  });

  test('the About tab shows the backend status and links the shipped dashboards', async ({ gotoPage, page }) => {
    await gotoPage('/about');
    await expect(page.getByTestId(testIds.overview.container)).toBeVisible();
    await expect(page.getByText(/InferScope app backend version .* is answering/)).toBeVisible();
    await expect(page.getByRole('link', { name: 'vLLM minimal' })).toHaveAttribute(
      'href',
      /\/d\/inferscope-vllm-minimal/
    );
  });
});
