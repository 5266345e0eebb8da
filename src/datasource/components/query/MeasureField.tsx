import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { Combobox } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { localized } from '../../localized';
import { QUERY_TYPE } from '../../catalog.gen';
import { MEASURES, QueryType } from '../../types';
import { QueryField } from './QueryField';

interface Props {
  queryType: QueryType;
  value?: string;
  onChange: (measure: string | undefined) => void;
}

/** MeasureField picks one output of the query type; cleared, the backend returns the type's default outputs. */
export function MeasureField({ queryType, value, onChange }: Props) {
  const measures = MEASURES[queryType];
  if (!measures || measures.options.length < 2) {
    return null; // nothing to choose
  }
  const options = localized(`catalog.measure.${queryType}`, measures.options);
  const label =
    queryType === QUERY_TYPE.dp_balance
      ? t('measure-field.rank-load.label', 'Rank load measure')
      : t('measure-field.measure', 'Measure');
  const selected = options.find((m) => m.value === value);
  const defaults = measures.defaults.map((d) => options.find((m) => m.value === d)?.label ?? d).join(', ');
  return (
    <QueryField
      label={label}
      description={
        selected?.description ??
        (queryType === QUERY_TYPE.dp_balance
          ? tf(
              'measure-field.rank-load.description',
              'The per-rank load whose balance is scored (max ÷ mean, cv, idle-while-waiting). Default: {{defaults}}.',
              { defaults }
            )
          : tf('measure-field.description', 'Empty returns the defaults: {{defaults}}.', { defaults }))
      }
    >
      <Combobox<string>
        aria-label={label}
        data-testid={testIds.queryEditor.measure}
        options={options}
        value={value ?? null}
        placeholder={tf('measure-field.placeholder', 'Default ({{defaults}})', { defaults })}
        isClearable
        width={32}
        onChange={(opt) => onChange(opt?.value)}
      />
    </QueryField>
  );
}
