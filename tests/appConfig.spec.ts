import { test, expect } from './fixtures';
import { testIds } from '../src/components/testIds';

const name = 'vllm-ascend-dp2';
const resource = `/api/plugins/inferscope-vllm-app/resources/profiler-configs/${name}/metric-enable`;

test('config page switches the Ascend profiler metric collection and back', async ({ appConfigPage, page }) => {
  void appConfigPage;
  await expect(page.getByTestId(testIds.appConfig.container)).toBeVisible();
  const row = page.getByTestId(testIds.appConfig.profilerRow(name));
  await expect(row).toBeVisible();
  const sw = page.getByTestId(testIds.appConfig.metricEnable(name));
  await expect(sw).toBeEnabled();
  const before = await sw.isChecked();

  for (const want of [!before, before]) {
    const put = page.waitForResponse((r) => r.url().endsWith(resource) && r.request().method() === 'PUT');
    // Grafana's Switch draws over a transparent checkbox, which Playwright may consider covered.
    await sw.click({ force: true });
    await expect(await put).toBeOK();
    await expect(sw).toBeEnabled();
    expect(await sw.isChecked()).toBe(want);
    await expect(row).toContainText(`metric_enable: ${want ? 1 : 0}`);
  }

  // The simulator re-reads the file every few seconds; Refresh until the page reports the exposure that matches.
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect(page.getByTestId(testIds.appConfig.exposed(name))).toContainText(
      before ? 'vllm_profiling_* exposed at' : 'vllm_profiling_* not exposed'
    );
  }).toPass({ timeout: 30_000 });
});
