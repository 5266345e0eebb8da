import React from 'react';
import { QueryEditorProps } from '@grafana/data';
import { Combobox, Field, Input, Stack } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import { DataSource } from '../datasource';
import { QUERY_TYPES, QueryType, TYPE_FIELDS, VllmOptions, VllmQuery } from '../types';
import { validateQuery } from '../validation';
import { useDraft } from '../hooks/useDraft';
import { CapacitySection } from './query/CapacitySection';
import { ExecutedQuery } from './query/ExecutedQuery';
import { FiltersSection } from './query/FiltersSection';
import { LatencySection } from './query/LatencySection';
import { MeasureField } from './query/MeasureField';
import { PromQLSection } from './query/PromQLSection';
import { RawSection } from './query/RawSection';

type Props = QueryEditorProps<DataSource, VllmQuery, VllmOptions>;

/** TextField is an input that commits (and runs the query) on blur, so typing does not fire a query per key. */
function TextField(props: {
  label: string;
  description: string;
  value?: string;
  placeholder: string;
  testId: string;
  invalid?: string;
  width: number;
  onCommit: (value: string | undefined) => void;
}) {
  const [text, setText] = useDraft(props.value ?? '');
  return (
    <Field label={props.label} description={props.description} invalid={Boolean(props.invalid)} error={props.invalid}>
      <Input
        aria-label={props.label}
        data-testid={props.testId}
        placeholder={props.placeholder}
        value={text}
        width={props.width}
        onChange={(ev) => setText(ev.currentTarget.value)}
        onBlur={() => text !== (props.value ?? '') && props.onCommit(text.trim() || undefined)}
      />
    </Field>
  );
}

/**
 * QueryEditor builds an InferScope query: the query type with a sentence on what it computes, then only the fields
 * that type uses (filters fed by the data source's resources, measure, latency family and quantiles, headroom, raw
 * metric and label filters, or a PromQL expression), the legend, and the PromQL Prometheus mode ran.
 */
export function QueryEditor({ query, onChange, onRunQuery, datasource, data }: Props) {
  const queryType = query.queryType ?? 'kv_cache_usage';
  const fields = TYPE_FIELDS[queryType] ?? TYPE_FIELDS.kv_cache_usage;
  const selected = QUERY_TYPES.find((t) => t.value === queryType);
  const errors = validateQuery({ ...query, queryType });

  const update = (patch: Partial<VllmQuery>, run = true) => {
    onChange({ ...query, ...patch });
    if (run) {
      onRunQuery();
    }
  };

  const changeType = (next: QueryType) => {
    // Fields of the old type would fail the new type's validation (measures differ), so keep only shared ones.
    const { refId, hide, datasource: ds, endpoint, model, engine, groupBy, window, legendFormat } = query;
    const kept: VllmQuery = {
      refId,
      hide,
      datasource: ds,
      endpoint,
      model,
      engine,
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
    <Stack direction="column" gap={0}>
      <Stack direction="row" gap={2} wrap="wrap" alignItems="flex-start">
        <Field label="Query type" description={selected?.description}>
          <Combobox<QueryType>
            aria-label="Query type"
            data-testid={testIds.queryEditor.queryType}
            options={QUERY_TYPES}
            value={queryType}
            width={32}
            onChange={(opt) => changeType(opt.value)}
          />
        </Field>
        <MeasureField queryType={queryType} value={query.measure} onChange={(measure) => update({ measure })} />
        {fields.headroom && (
          <CapacitySection
            value={query.headroom}
            invalid={errors.headroom}
            onChange={(headroom) => update({ headroom })}
          />
        )}
      </Stack>
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
      <Stack direction="row" gap={2} wrap="wrap" alignItems="flex-start">
        {fields.window && (
          <TextField
            label="Window"
            description="Rate window, e.g. 1m. Empty = $__rate_interval rule."
            placeholder="auto"
            value={query.window}
            invalid={errors.window}
            testId={testIds.queryEditor.window}
            width={16}
            onCommit={(window) => update({ window })}
          />
        )}
        <TextField
          label="Legend"
          description="Series name, e.g. {{endpoint}} engine {{engine}}."
          placeholder="auto"
          value={query.legendFormat}
          testId={testIds.queryEditor.legendFormat}
          width={40}
          onCommit={(legendFormat) => update({ legendFormat })}
        />
      </Stack>
      <ExecutedQuery data={data} refId={query.refId} />
    </Stack>
  );
}
