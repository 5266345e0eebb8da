import { expect, Locator, Page } from '@playwright/test';

/** pickOption opens a Grafana Combobox and picks the option whose text starts with `label`. */
export async function pickOption(page: Page, combobox: Locator, label: string) {
  await combobox.click();
  await combobox.fill(label);
  const option = page
    .getByRole('option', { name: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) })
    .first();
  await expect(option).toBeVisible();
  await option.click();
}
