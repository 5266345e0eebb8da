import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { localized } from '../../localized';
import { Combobox, RadioButtonGroup, Stack } from '@grafana/ui';
import { EditorRow } from '@grafana/plugin-ui';
import { testIds } from '../../../components/testIds';
import type { DataSource } from '../../datasource';
import { useResource } from '../../hooks/useResource';
import { HISTOGRAM as HISTOGRAM_VALUE, type Histogram } from '../../catalog.gen';
import { VllmQuery } from '../../types';
import { QueryErrors } from '../../validation';
import { LabelFilters } from './LabelFilters';
import { variableOptions } from './MatcherPicker';
import { QuantilesField } from './QuantilesField';
import { QueryField } from './QueryField';

interface Props {
  datasource: DataSource;
  query: VllmQuery;
  errors: QueryErrors;
  onChange: (patch: Partial<VllmQuery>, run?: boolean) => void;
}

type HistogramMode = Histogram | '';

export const HISTOGRAM: Array<{ value: HistogramMode; label: string; description: string }> = [
  { value: '', label: 'As exposed', description: 'Series as scraped.' },
  { value: HISTOGRAM_VALUE.buckets, label: 'Buckets', description: 'Histogram buckets per le, cumulative.' },
  { value: HISTOGRAM_VALUE.quantiles, label: 'Quantiles', description: 'Histogram quantiles over the window.' },
];

/** RawSection picks a metric by name from the metrics resource, its label filters and, for histograms, the output. */
export function RawSection({ datasource, query, errors, onChange }: Props) {
  const metrics = useResource(datasource, 'metrics');
  const histograms = localized('raw-section.histogram', HISTOGRAM);
  const options = [...metrics.values.map((m) => ({ value: m, label: m })), ...variableOptions()];
  return (
    <Stack direction="column" gap={0}>
      <EditorRow>
        <QueryField
          label={t('raw-section.metric.label', 'Metric')}
          description={
            metrics.error
              ? tf(
                  'raw-section.metric.description-error',
                  'Metric family name as the endpoints expose it. Could not list metrics: {{error}}',
                  { error: metrics.error }
                )
              : t('raw-section.metric.description', 'Metric family name as the endpoints expose it.')
          }
          invalid={Boolean(errors.metric)}
          error={errors.metric}
        >
          <Combobox<string>
            aria-label={t('raw-section.metric.aria', 'Metric')}
            data-testid={testIds.queryEditor.rawMetric}
            options={options}
            value={query.metric ? { value: query.metric, label: query.metric } : null}
            loading={metrics.loading}
            // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
            placeholder="vllm:num_requests_running"
            createCustomValue
            width={48}
            onChange={(opt) => onChange({ metric: opt.value }, true)}
          />
        </QueryField>
        <QueryField
          label={t('raw-section.histogram.label', 'Histogram')}
          description={histograms.find((h) => h.value === (query.histogram ?? ''))?.description}
        >
          <div data-testid={testIds.queryEditor.histogram}>
            <RadioButtonGroup<HistogramMode>
              options={histograms}
              value={query.histogram ?? ''}
              onChange={(v) => onChange({ histogram: v || undefined }, true)}
            />
          </div>
        </QueryField>
        {query.histogram === HISTOGRAM_VALUE.quantiles && (
          <QuantilesField
            value={query.quantiles}
            invalid={errors.quantiles}
            onChange={(quantiles) => onChange({ quantiles }, true)}
          />
        )}
      </EditorRow>
      <LabelFilters
        datasource={datasource}
        value={query.labels}
        invalid={errors.labels}
        onChange={(labels) => onChange({ labels }, true)}
      />
    </Stack>
  );
}
