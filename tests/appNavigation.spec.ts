import { test, expect } from './fixtures';
import { testIds } from '../src/components/testIds';

test.describe('app overview', () => {
  test('shows the backend status and links the shipped dashboards', async ({ gotoPage, page }) => {
    await gotoPage('/');
    await expect(page.getByTestId(testIds.overview.container)).toBeVisible();
    await expect(page.getByText(/InferScope app backend version .* is answering/)).toBeVisible();
    await expect(page.getByRole('link', { name: 'vLLM minimal' })).toHaveAttribute('href', /\/d\/inferscope-vllm-minimal/);
  });
});
