import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../i18n';
import { localized } from '../localized';
import { QueryEditorProps } from '@grafana/data';
import { EditorRow, EditorRows } from '@grafana/plugin-ui';
import { Combobox } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import { DataSource } from '../datasource';
import { QUERY_TYPES, QueryType, TYPE_FIELDS, VllmOptions, VllmQuery } from '../types';
import { validateQuery } from '../validation';
import { CommitInput } from './CommitInput';
import { CapacitySection } from './query/CapacitySection';
import { ExecutedQuery } from './query/ExecutedQuery';
import { FiltersSection } from './query/FiltersSection';
import { LatencySection } from './query/LatencySection';
import { MeasureField } from './query/MeasureField';
import { PromQLSection } from './query/PromQLSection';
import { RawSection } from './query/RawSection';
import { QueryField } from './query/QueryField';

type Props = QueryEditorProps<DataSource, VllmQuery, VllmOptions>;

/**
 * QueryEditor builds an InferScope query: the query type with a sentence on what it computes, then only the fields
 * that type uses (filters fed by the data source's resources, measure, latency family and quantiles, headroom, raw
 * metric and label filters, or a PromQL expression), the legend, and the PromQL Prometheus mode ran.
 */
export function QueryEditor({ query, onChange, onRunQuery, datasource, data }: Props) {
  const queryType = query.queryType ?? 'kv_cache_usage';
  const fields = TYPE_FIELDS[queryType] ?? TYPE_FIELDS.kv_cache_usage;
  const types = localized('catalog.type', QUERY_TYPES);
  const selected = types.find((o) => o.value === queryType);
  const errors = validateQuery({ ...query, queryType });

  const update = (patch: Partial<VllmQuery>, run = true) => {
    onChange({ ...query, ...patch });
    if (run) {
      onRunQuery();
    }
  };

  const changeType = (next: QueryType) => {
    // Fields of the old type would fail the new type's validation (measures differ), so keep only shared ones.
    const { refId, hide, datasource: ds, endpoint, model, engine, role, groupBy, window, legendFormat } = query;
    const kept: VllmQuery = {
      refId,
      hide,
      datasource: ds,
      endpoint,
      model,
      engine,
      role,
      groupBy,
      window,
      legendFormat,
      queryType: next,
    };
    if (next === 'promql' || query.queryType === 'promql') {
      kept.expr = query.expr;
    }
    onChange(JSON.parse(JSON.stringify(kept)) as VllmQuery);
    onRunQuery();
  };

  return (
    <EditorRows>
      <EditorRow>
        <QueryField label={t('query-editor.query-type.label', 'Query type')} description={selected?.description}>
          <Combobox<QueryType>
            aria-label={t('query-editor.query-type.aria', 'Query type')}
            data-testid={testIds.queryEditor.queryType}
            options={types}
            value={queryType}
            width={32}
            onChange={(opt) => changeType(opt.value)}
          />
        </QueryField>
        <MeasureField queryType={queryType} value={query.measure} onChange={(measure) => update({ measure })} />
        {fields.headroom && (
          <CapacitySection
            value={query.headroom}
            invalid={errors.headroom}
            onChange={(headroom) => update({ headroom })}
          />
        )}
      </EditorRow>
      {fields.latency && <LatencySection datasource={datasource} query={query} errors={errors} onChange={update} />}
      {fields.raw && <RawSection datasource={datasource} query={query} errors={errors} onChange={update} />}
      {fields.promql && (
        <PromQLSection value={query.expr} invalid={errors.expr} onChange={(expr, run) => update({ expr }, run)} />
      )}
      {fields.filters && (
        <FiltersSection
          datasource={datasource}
          query={query}
          errors={errors}
          showGroupBy={fields.groupBy}
          onChange={(patch) => update(patch)}
        />
      )}
      <EditorRow>
        {fields.window && (
          <QueryField
            label={t('query-editor.window.label', 'Window')}
            description={t(
              'query-editor.rate-window-e-g-1m.description',
              'Rate window, e.g. 1m. Empty = $__rate_interval rule.'
            )}
            invalid={Boolean(errors.window)}
            error={errors.window}
          >
            <CommitInput
              aria-label={t('query-editor.window.aria', 'Window')}
              data-testid={testIds.queryEditor.window}
              kind="duration"
              placeholder={t('query-editor.auto.placeholder', 'auto')}
              value={query.window}
              onCommit={(window) => update({ window })}
            />
          </QueryField>
        )}
        <QueryField
          label={t('query-editor.legend.label', 'Legend')}
          description={tf('query-editor.legend.description', 'Series name, e.g. {{example}}.', {
            example: '{{endpoint}} engine {{engine}}',
          })}
        >
          <CommitInput
            aria-label={t('query-editor.legend.aria', 'Legend')}
            data-testid={testIds.queryEditor.legendFormat}
            placeholder={t('query-editor.auto.placeholder', 'auto')}
            value={query.legendFormat}
            minWidth={20}
            onCommit={(legendFormat) => update({ legendFormat })}
          />
        </QueryField>
      </EditorRow>
      <ExecutedQuery data={data} refId={query.refId} />
    </EditorRows>
  );
}
