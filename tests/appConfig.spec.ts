import { test, expect } from './fixtures';
import { testIds } from '../src/components/testIds';

// docker-compose's Ascend simulator is reached through its profiler agent (ascend-agent): Grafana mounts none of
// its files.
const name = 'vllm-ascend-dp2';
const resource = `/api/plugins/inferscope-vllm-app/resources/agents/${name}`;

test('config page switches the Ascend profiler metric collection through the agent and back', async ({
  appConfigPage,
  page,
}) => {
  void appConfigPage;
  await expect(page.getByTestId(testIds.appConfig.container)).toBeVisible();
  const row = page.getByTestId(testIds.appConfig.agentRow(name));
  await expect(row).toBeVisible();
  const sw = page.getByTestId(testIds.appConfig.agentMetricEnable(name));
  await expect(sw).toBeEnabled();
  const before = await sw.isChecked();

  for (const want of [!before, before]) {
    const put = page.waitForResponse(
      (r) => r.url().endsWith(`${resource}/metric-enable`) && r.request().method() === 'PUT'
    );
    // Grafana's Switch draws over a transparent checkbox, which Playwright may consider covered.
    await sw.click({ force: true });
    await expect(await put).toBeOK();
    await expect(sw).toBeEnabled();
    expect(await sw.isChecked()).toBe(want);
    await expect(row).toContainText(`metric_enable: ${want ? 1 : 0}`);
  }

  // The simulator re-reads the file every few seconds; Refresh until the page reports the exposure that matches.
  await expect(async () => {
    await page.getByTestId(testIds.appConfig.agents).getByRole('button', { name: 'Refresh' }).click();
    await expect(page.getByTestId(testIds.appConfig.agentExposed(name))).toContainText(
      before ? 'vllm_profiling_* exposed (' : 'vllm_profiling_* not exposed'
    );
  }).toPass({ timeout: 30_000 });
});

test('config page checks the symbols file and takes a torch profile through the agent', async ({
  appConfigPage,
  page,
}) => {
  void appConfigPage;
  await page.getByTestId(testIds.appConfig.agentSymbolsCheck(name)).click();
  const symbols = page.getByTestId(testIds.appConfig.agentSymbols(name));
  await expect(symbols).toContainText('server:create_completion:duration');
  await expect(symbols).toContainText('changes take effect when vLLM restarts');

  const start = page.waitForResponse((r) => r.url().endsWith(`${resource}/profile`) && r.request().method() === 'POST');
  const profiler = page.getByTestId(testIds.appConfig.agentProfiler(name));
  await profiler.getByRole('spinbutton').fill('2');
  await page.getByTestId(testIds.appConfig.agentProfileStart(name)).click();
  await expect(await start).toBeOK();
  // The agent stops the profile by itself after two seconds and the simulator writes a trace.
  await expect(async () => {
    await page.getByTestId(testIds.appConfig.agentTraces(name)).click();
    await expect(page.getByTestId(testIds.appConfig.agentTraceList(name)).getByRole('link').first()).toBeVisible();
  }).toPass({ timeout: 30_000 });
});
