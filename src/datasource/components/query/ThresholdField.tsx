import React from 'react';
import { t } from '@grafana/i18n';
import { testIds } from '../../../components/testIds';
import { CommitInput, toNumber } from '../CommitInput';
import { QueryField } from './QueryField';

interface Props {
  value?: number;
  invalid?: string;
  onChange: (threshold: number | undefined) => void;
}

/** ThresholdField edits the SLO target of the measures that read one (SLO attainment, goodput), in seconds. */
export function ThresholdField({ value, invalid, onChange }: Props) {
  return (
    <QueryField
      label={t('latency-section.threshold.label', 'SLO target (s)')}
      description={t(
        'latency-section.threshold.description',
        'Requests at or below this many seconds attain the SLO; between bucket bounds the share is interpolated.'
      )}
      invalid={Boolean(invalid)}
      error={invalid}
    >
      <CommitInput
        aria-label={t('latency-section.threshold.aria', 'SLO target')}
        data-testid={testIds.queryEditor.threshold}
        kind="number"
        value={value}
        onCommit={(text) => onChange(toNumber(text))}
      />
    </QueryField>
  );
}
