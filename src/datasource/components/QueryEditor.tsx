import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../i18n';
import { localized } from '../localized';
import { QueryEditorProps } from '@grafana/data';
import { EditorRow, EditorRows } from '@grafana/plugin-ui';
import { Combobox } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import { DataSource } from '../datasource';
import { FIELD, QUERY_TYPE } from '../catalog.gen';
import { QUERY_TYPES, QueryType, queryFields, VllmOptions, VllmQuery } from '../types';
import { validateQuery } from '../validation';
import { CommitInput } from './CommitInput';
import { CapacitySection } from './query/CapacitySection';
import { ExecutedQuery } from './query/ExecutedQuery';
import { FiltersSection } from './query/FiltersSection';
import { LatencySection } from './query/LatencySection';
import { MeasureField } from './query/MeasureField';
import { PromQLSection } from './query/PromQLSection';
import { RawSection } from './query/RawSection';
import { OutputField } from './query/OutputField';
import { ScoreField } from './query/ScoreField';
import { ThresholdField } from './query/ThresholdField';
import { QuantilesField } from './query/QuantilesField';
import { QueryField } from './query/QueryField';

type Props = QueryEditorProps<DataSource, VllmQuery, VllmOptions>;

/**
 * QueryEditor builds an InferScope query: the query type with a sentence on what it computes, then only the fields
 * that type uses (filters fed by the data source's resources, measure, latency family and quantiles, headroom, raw
 * metric and label filters, or a PromQL expression), the legend, and the PromQL Prometheus mode ran.
 */
export function QueryEditor({ query, onChange, onRunQuery, datasource, data }: Props) {
  const queryType = query.queryType ?? QUERY_TYPE.kv_cache_usage;
  // The fields shown are those the catalog says the query's measures read (catalog.json, from pkg/measure).
  const fields = queryFields(queryType, query.measure);
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
    const {
      refId,
      hide,
      datasource: ds,
      endpoint,
      model,
      engine,
      role,
      groupBy,
      limit,
      rank,
      buckets,
      window,
      legendFormat,
    } = query;
    const kept: VllmQuery = {
      refId,
      hide,
      datasource: ds,
      endpoint,
      model,
      engine,
      role,
      groupBy,
      limit,
      rank,
      buckets,
      window,
      legendFormat,
      queryType: next,
    };
    if (next === QUERY_TYPE.promql || query.queryType === QUERY_TYPE.promql) {
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
        <MeasureField
          queryType={queryType}
          value={query.measure}
          onChange={(measure) => update({ measure, output: undefined })}
        />
        {fields.reads(FIELD.headroom) && (
          <CapacitySection
            value={query.headroom}
            invalid={errors.headroom}
            onChange={(headroom) => update({ headroom })}
          />
        )}
        {fields.reads(FIELD.score) && <ScoreField value={query.score} onChange={(score) => update({ score })} />}
        {fields.reads(FIELD.output) && (
          <OutputField
            queryType={queryType}
            measure={query.measure}
            value={query.output}
            onChange={(output) => update({ output })}
          />
        )}
      </EditorRow>
      {fields.reads(FIELD.family) && <LatencySection datasource={datasource} query={query} onChange={update} />}
      {(fields.reads(FIELD.threshold) || (fields.reads(FIELD.quantiles) && !fields.reads(FIELD.histogram))) && (
        <EditorRow>
          {fields.reads(FIELD.quantiles) && !fields.reads(FIELD.histogram) && (
            <QuantilesField
              value={query.quantiles}
              invalid={errors.quantiles}
              onChange={(quantiles) => update({ quantiles })}
            />
          )}
          {fields.reads(FIELD.threshold) && (
            <ThresholdField
              value={query.threshold}
              invalid={errors.threshold}
              onChange={(threshold) => update({ threshold })}
            />
          )}
        </EditorRow>
      )}
      {fields.reads(FIELD.metric) && (
        <RawSection datasource={datasource} query={query} errors={errors} onChange={update} />
      )}
      {fields.reads(FIELD.expr) && (
        <PromQLSection value={query.expr} invalid={errors.expr} onChange={(expr, run) => update({ expr }, run)} />
      )}
      {fields.reads(FIELD.endpoint) && (
        <FiltersSection
          datasource={datasource}
          query={query}
          errors={errors}
          groupings={fields.groupBy}
          ranked={fields.reads(FIELD.limit)}
          onChange={(patch) => update(patch)}
        />
      )}
      <EditorRow>
        {fields.reads(FIELD.window) && (
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
