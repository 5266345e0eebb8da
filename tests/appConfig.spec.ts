import { test, expect } from './fixtures';
import { testIds } from '../src/components/testIds';

test('config page reports the backend and says the profiler switch is not available yet', async ({ appConfigPage, page }) => {
  await expect(page.getByTestId(testIds.appConfig.container)).toBeVisible();
  await expect(page.getByTestId(testIds.appConfig.profilerNotice)).toContainText('not implemented in this version');
  void appConfigPage;
});
