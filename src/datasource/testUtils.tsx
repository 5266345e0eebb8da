import React from 'react';
import { act, render, RenderResult } from '@testing-library/react';

interface MockComboboxProps {
  options: Array<{ value: string; label?: string }>;
  value?: string | { value: string } | null;
  onChange: (opt: { value: string; label?: string } | null) => void;
  'data-testid'?: string;
  'aria-label'?: string;
}

/**
 * MockCombobox stands in for Grafana's Combobox in Jest: jsdom cannot lay out its virtualised option list, so tests
 * use a native select with the same options and onChange contract ("" clears). Playwright specs use the real one.
 */
export function MockCombobox({ options, value, onChange, ...rest }: MockComboboxProps) {
  const current = typeof value === 'object' && value !== null ? value.value : (value ?? '');
  const all = current && !options.some((o) => o.value === current) ? [...options, { value: current }] : options;
  return (
    <select
      data-testid={rest['data-testid']}
      aria-label={rest['aria-label']}
      value={current}
      onChange={(ev) => {
        const v = ev.currentTarget.value;
        onChange(v ? (all.find((o) => o.value === v) ?? { value: v }) : null);
      }}
    >
      <option value="">(none)</option>
      {all.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label ?? o.value}
        </option>
      ))}
    </select>
  );
}

/**
 * renderSettled renders inside act() and lets the component's resource loads settle, as a user would see it a
 * moment after it appears; rendering outside act() leaves those state updates unwrapped.
 */
export async function renderSettled(ui: React.ReactElement): Promise<RenderResult> {
  let result: RenderResult | undefined;
  await act(async () => {
    result = render(ui);
  });
  return result!;
}
