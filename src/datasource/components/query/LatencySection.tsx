import React, { useMemo } from 'react';
import { t } from '@grafana/i18n';
import { localized } from '../../localized';
import { Combobox } from '@grafana/ui';
import { EditorRow } from '@grafana/plugin-ui';
import { testIds } from '../../../components/testIds';
import type { DataSource } from '../../datasource';
import { useResource } from '../../hooks/useResource';
import { DEFAULT_METRIC, LATENCY_METRICS, TIMER_PREFIX, VllmQuery } from '../../types';
import { QueryField } from './QueryField';

interface Props {
  datasource: DataSource;
  query: VllmQuery;
  onChange: (patch: Partial<VllmQuery>, run?: boolean) => void;
}

/** LatencySection picks the latency family (or an Ascend profiler timer) whose histogram the measure reads. */
export function LatencySection({ datasource, query, onChange }: Props) {
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
  const metric = query.metric ?? DEFAULT_METRIC;
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
    </EditorRow>
  );
}
