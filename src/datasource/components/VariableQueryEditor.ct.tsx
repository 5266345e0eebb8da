import React from 'react';
import { expect, test } from '@playwright/experimental-ct-react';
import type { HooksConfig } from '../../ct/backend';
import { state } from '../../ct/helpers';
import { VariableEditorStory } from '../../ct/stories';

test('the variable editor lists a resource, and a label for label values', async ({ mount, page }) => {
  await mount<HooksConfig>(<VariableEditorStory />);
  await page.getByRole('radio', { name: 'Engines / DP ranks' }).click();
  await expect.poll(async () => ((await state<{ resource: string }>(page)) ?? {}).resource).toBe('engines');
  await page.getByRole('radio', { name: 'Label values' }).click();
  const label = page.getByLabel('Label', { exact: true });
  await label.fill('finished_reason');
  await label.blur();
  await expect
    .poll(async () => await state(page))
    .toMatchObject({ resource: 'label-values', label: 'finished_reason' });
});
