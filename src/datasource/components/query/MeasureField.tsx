import React from 'react';
import { Combobox } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
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
  const label = queryType === 'dp_balance' ? 'Rank load measure' : 'Measure';
  const selected = measures.options.find((m) => m.value === value);
  const defaults = measures.defaults.map((d) => measures.options.find((m) => m.value === d)?.label ?? d).join(', ');
  return (
    <QueryField
      label={label}
      description={
        selected?.description ??
        (queryType === 'dp_balance'
          ? `The per-rank load whose balance is scored (max ÷ mean, cv, idle-while-waiting). Default: ${defaults}.`
          : `Empty returns the defaults: ${defaults}.`)
      }
    >
      <Combobox<string>
        aria-label={label}
        data-testid={testIds.queryEditor.measure}
        options={measures.options}
        value={value ?? null}
        placeholder={`Default (${defaults})`}
        isClearable
        width={32}
        onChange={(opt) => onChange(opt?.value)}
      />
    </QueryField>
  );
}
