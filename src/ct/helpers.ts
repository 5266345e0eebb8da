import type { Locator, Page } from '@playwright/test';
import type { Request } from './backend';

/** state reads a story's state (its query or settings) as the user's edits left it. */
export async function state<T>(page: Page): Promise<T> {
  return JSON.parse((await page.getByTestId('ct-state').textContent()) ?? 'null') as T;
}

/** requests are the backend calls the components made so far. */
export async function requests(page: Page): Promise<Request[]> {
  return page.evaluate(() => window.__requests);
}

/**
 * option is the Combobox option whose label (not description) is exactly label; where the typed text also appears
 * as the "custom value" entry a creatable Combobox puts first, the listed option is the last one.
 */
function option(page: Page, label: string): Locator {
  const name = page.locator('[class*="combobox-option-label"]').getByText(label, { exact: true });
  return page.getByRole('option').filter({ has: name }).last();
}

/** pick chooses an option from one of Grafana's Comboboxes the way a user does: open it, type, click the option. */
export async function pick(page: Page, combobox: Locator, label: string) {
  await combobox.click();
  await combobox.fill(label);
  await option(page, label).click();
}

/** offers reports whether a Combobox offers an option labelled label: the user types it and sees it listed. */
export async function offers(page: Page, combobox: Locator, label: string): Promise<boolean> {
  await combobox.click();
  await combobox.fill(label);
  const found = await option(page, label)
    .waitFor({ timeout: 2000 })
    .then(() => true)
    .catch(() => false);
  await combobox.fill('');
  await page.keyboard.press('Escape');
  return found;
}

/** screenshot saves a catalog screenshot under src/img/screenshots when the run regenerates them (npm run screenshots). */
export async function screenshot(page: Page, name: string) {
  if (process.env.SCREENSHOTS) {
    await page.waitForLoadState('networkidle'); // icons are fetched after the first render
    await page.screenshot({ path: `src/img/screenshots/${name}.png`, fullPage: true, animations: 'disabled' });
  }
}

/** screenshotOf saves a catalog screenshot of one element (npm run screenshots), as screenshot does for the page. */
export async function screenshotOf(element: Locator, name: string) {
  if (process.env.SCREENSHOTS) {
    await element.page().waitForLoadState('networkidle');
    await element.screenshot({ path: `src/img/screenshots/${name}.png`, animations: 'disabled' });
  }
}

/** THEMES are the Grafana themes screenshots are taken in. */
export const THEMES = ['dark', 'light'] as const;
