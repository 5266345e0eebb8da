import React from 'react';
import { t } from '@grafana/i18n';
import { Combobox } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { QueryType } from '../../catalog.gen';
import { selectedMeasures } from '../../types';
import { QueryField } from './QueryField';

interface Props {
  queryType: QueryType;
  measure?: string;
  value?: string;
  onChange: (output: string | undefined) => void;
}

/**
 * OutputField keeps one of a measure's outputs (they share their labels): what an alert rule needs to compare one
 * number per series. Cleared, the query returns every output.
 */
export function OutputField({ queryType, measure, value, onChange }: Props) {
  const names = [...new Set(selectedMeasures(queryType, measure).flatMap((m) => m.outputs.map((o) => o.name)))];
  return (
    <QueryField
      label={t('output-field.label', 'Output')}
      description={t(
        'output-field.description',
        'One output of the measure only, for alert rules: its outputs share their labels. Empty = every output.'
      )}
    >
      <Combobox<string>
        aria-label={t('output-field.aria', 'Output')}
        data-testid={testIds.queryEditor.output}
        options={names.map((n) => ({ value: n, label: n }))}
        value={value ?? null}
        isClearable
        width={36}
        onChange={(opt) => onChange(opt?.value)}
      />
    </QueryField>
  );
}
