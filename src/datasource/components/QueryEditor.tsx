import React from 'react';
import { QueryEditorProps } from '@grafana/data';
import { Combobox, Field } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import { DataSource } from '../datasource';
import { QUERY_TYPES, QueryType, VllmOptions, VllmQuery } from '../types';

type Props = QueryEditorProps<DataSource, VllmQuery, VllmOptions>;

/** QueryEditor picks what the backend computes for this query. */
export function QueryEditor({ query, onChange, onRunQuery }: Props) {
  const selected = QUERY_TYPES.find((t) => t.value === query.queryType);
  return (
    <Field label="Query type" description={selected?.description}>
      <div data-testid={testIds.queryEditor.queryType}>
        <Combobox<QueryType>
          aria-label="Query type"
          options={QUERY_TYPES}
          value={query.queryType ?? null}
          width={32}
          onChange={(opt) => {
            onChange({ ...query, queryType: opt.value });
            onRunQuery();
          }}
        />
      </div>
    </Field>
  );
}
