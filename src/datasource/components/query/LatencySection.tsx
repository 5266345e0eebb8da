import React, { useMemo } from 'react';
import { t } from '@grafana/i18n';
import { localized } from '../../localized';
import { Combobox } from '@grafana/ui';
import { EditorRow } from '@grafana/plugin-ui';
import { testIds } from '../../../components/testIds';
import type { DataSource } from '../../datasource';
import { useResource } from '../../hooks/useResource';
import { LATENCY_METRICS, TIMER_PREFIX, VllmQuery } from '../../types';
import { QueryErrors } from '../../validation';
import { CommitInput, toNumber } from '../CommitInput';
import { QuantilesField } from './QuantilesField';
import { QueryField } from './QueryField';

interface Props {
  datasource: DataSource;
  query: VllmQuery;
  errors: QueryErrors;
  onChange: (patch: Partial<VllmQuery>, run?: boolean) => void;
}

/** LatencySection picks the latency family (or an Ascend profiler timer) and the quantiles or the SLO target. */
export function LatencySection({ datasource, query, errors, onChange }: Props) {
  const metrics = useResource(datasource, 'metrics');
  const options = useMemo(
    () => [
      ...localized('catalog.family', LATENCY_METRICS),
      ...metrics.values
        .filter((m) => m.startsWith('vllm_profiling_'))
        .map((m) => ({
          value: TIMER_PREFIX + m,
          label: m,
          description: t('latency-section.timer', 'vLLM-Ascend profiler timer'),
        })),
    ],
    [metrics.values]
  );
  const metric = query.metric ?? 'ttft';
  const selected = options.find((o) => o.value === metric);
  return (
    <EditorRow>
      <QueryField
        label={t('latency-section.latency-metric.label', 'Latency metric')}
        description={
          selected?.description ??
          t('latency-section.metric.description', 'Histogram family whose quantiles are computed.')
        }
      >
        <Combobox<string>
          aria-label={t('latency-section.latency-metric.aria', 'Latency metric')}
          data-testid={testIds.queryEditor.latencyMetric}
          options={options}
          value={selected ?? { value: metric, label: metric }}
          loading={metrics.loading}
          createCustomValue
          width={32}
          onChange={(opt) => onChange({ metric: opt.value }, true)}
        />
      </QueryField>
      {(query.measure ?? 'quantiles') === 'quantiles' && (
        <QuantilesField
          value={query.quantiles}
          invalid={errors.quantiles}
          onChange={(quantiles) => onChange({ quantiles }, true)}
        />
      )}
      {query.measure === 'slo_attainment' && (
        <QueryField
          label={t('latency-section.threshold.label', 'SLO target (s)')}
          description={t(
            'latency-section.threshold.description',
            'Requests at or below this many seconds attain the SLO; between bucket bounds the share is interpolated.'
          )}
          invalid={Boolean(errors.threshold)}
          error={errors.threshold}
        >
          <CommitInput
            aria-label={t('latency-section.threshold.aria', 'SLO target')}
            data-testid={testIds.queryEditor.threshold}
            kind="number"
            placeholder={String(0.5)}
            value={query.threshold}
            onCommit={(text) => onChange({ threshold: toNumber(text) }, true)}
          />
        </QueryField>
      )}
    </EditorRow>
  );
}
