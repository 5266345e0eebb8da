import React from 'react';
import { screen } from '@testing-library/react';
import catalog from './catalog.json';
import { testIds } from '../components/testIds';
import type { DataSource } from './datasource';
import { MEASURES, QUERY_TYPE_VALUES, QueryType } from './types';
import { QueryEditor } from './components/QueryEditor';
import { renderSettled } from './testUtils';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getTemplateSrv: () => ({ getVariables: () => [], replace: (s: string) => s }),
}));

jest.mock('@grafana/ui', () => ({
  ...jest.requireActual('@grafana/ui'),
  Combobox: jest.requireActual('./testUtils').MockCombobox,
  CodeEditor: () => <textarea aria-label="code" />,
}));

const ds = { listResource: jest.fn(async () => []) } as unknown as DataSource;

function optionLabels(testId: string): string[] {
  return Array.from(screen.getByTestId(testId).querySelectorAll('option'))
    .filter((o) => o.value !== '')
    .map((o) => o.textContent ?? '');
}

// catalog.json is generated from the backend's measure catalog (pkg/measure) and checked by a Go test; these
// tests check the frontend's side of it.
describe('measure catalog', () => {
  it('names the same query types as the generated constants', () => {
    expect(catalog.types.map((t) => t.value)).toEqual([...QUERY_TYPE_VALUES]);
  });

  it.each(QUERY_TYPE_VALUES.map((t) => [t]))('offers every %s entry in the editor', async (queryType: QueryType) => {
    await renderSettled(
      <QueryEditor query={{ refId: 'A', queryType }} datasource={ds} onChange={jest.fn()} onRunQuery={jest.fn()} />
    );
    expect(optionLabels(testIds.queryEditor.queryType)).toContain(
      catalog.types.find((t) => t.value === queryType)?.label
    );
    const options = MEASURES[queryType].options;
    if (options.length < 2) {
      // A type with one measure has nothing to pick.
      expect(screen.queryByTestId(testIds.queryEditor.measure)).not.toBeInTheDocument();
      return;
    }
    expect(optionLabels(testIds.queryEditor.measure)).toEqual(options.map((o) => o.label));
  });
});
