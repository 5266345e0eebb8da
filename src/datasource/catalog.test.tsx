import React from 'react';
import { screen } from '@testing-library/react';
import catalog from './catalog.json';
import { testIds } from '../components/testIds';
import type { DataSource } from './datasource';
import { FIELD, Field, HISTOGRAM } from './catalog.gen';
import { FIELD_SPECS, MEASURES, QUERY_TYPE_VALUES, QueryType } from './types';
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

// The control through which the query editor sets each field; a field the catalog adds without one fails below.
const CONTROL: Record<Field, string | undefined> = {
  [FIELD.endpoint]: testIds.queryEditor.endpoint,
  [FIELD.model]: testIds.queryEditor.model,
  [FIELD.engine]: testIds.queryEditor.engine,
  [FIELD.role]: testIds.queryEditor.role,
  [FIELD.groupBy]: testIds.queryEditor.groupBy,
  [FIELD.limit]: testIds.queryEditor.limit,
  [FIELD.rank]: testIds.queryEditor.rank,
  [FIELD.buckets]: testIds.queryEditor.buckets,
  [FIELD.family]: testIds.queryEditor.latencyMetric,
  [FIELD.metric]: testIds.queryEditor.rawMetric,
  [FIELD.labels]: testIds.queryEditor.addLabel,
  [FIELD.histogram]: testIds.queryEditor.histogram,
  [FIELD.quantiles]: testIds.queryEditor.quantiles,
  [FIELD.threshold]: testIds.queryEditor.threshold,
  [FIELD.headroom]: testIds.queryEditor.headroom,
  [FIELD.score]: testIds.queryEditor.score,
  [FIELD.output]: testIds.queryEditor.output,
  [FIELD.window]: testIds.queryEditor.window,
  [FIELD.expr]: testIds.queryEditor.expr,
  // The data source fills the peaks from its settings (FIELD_SPECS marks them); the editor has no control for them.
  [FIELD.peakTflops]: undefined,
  [FIELD.peakMemoryTBps]: undefined,
};

const ENTRIES = QUERY_TYPE_VALUES.flatMap((t) => MEASURES[t].options.map((o) => [t, o.value, o.fields] as const));

describe('every field a measure reads', () => {
  it('is set in the editor or in the data source settings', () => {
    for (const f of Object.values(FIELD)) {
      expect({ field: f, editor: Boolean(CONTROL[f]) }).toEqual({ field: f, editor: !FIELD_SPECS[f].settings });
    }
  });

  it.each(ENTRIES)('%s/%s: the editor shows a control for each', async (queryType, measure, fields) => {
    // A raw histogram's quantiles show once the histogram is returned as quantiles.
    const histogram = fields.includes(FIELD.histogram) ? HISTOGRAM.quantiles : undefined;
    const { unmount } = await renderSettled(
      <QueryEditor
        query={{ refId: 'A', queryType, measure, histogram }}
        datasource={ds}
        onChange={jest.fn()}
        onRunQuery={jest.fn()}
      />
    );
    const missing = fields.filter((f) => !FIELD_SPECS[f].settings && !screen.queryByTestId(CONTROL[f] ?? f));
    expect(missing).toEqual([]);
    unmount();
  });
});
