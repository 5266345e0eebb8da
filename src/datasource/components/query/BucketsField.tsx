import React, { useState } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { testIds } from '../../../components/testIds';
import { FIELD } from '../../catalog.gen';
import { FIELD_SPECS } from '../../types';
import { CommitInput } from '../CommitInput';
import { parseQuantiles } from './QuantilesField';
import { QueryField } from './QueryField';

interface Props {
  value?: number[];
  invalid?: string;
  onChange: (buckets: number[] | undefined) => void;
}

/**
 * BucketsField turns a query's series into their distribution for a heatmap: at each step, how many series lie in
 * each bucket (upper bounds, increasing), the way the fleet overview shows where hundreds of endpoints' KV usage lies.
 */
export function BucketsField({ value, invalid, onChange }: Props) {
  const [parseError, setParseError] = useState<string>();
  const error = parseError ?? invalid;
  return (
    <QueryField
      label={t('buckets-field.label', 'Distribution')}
      description={tf(
        'buckets-field.description',
        'Upper bounds of up to {{max}} buckets, increasing and comma-separated: each step counts the series in each (a last +Inf bucket takes the rest), for a heatmap. Empty = the series themselves.',
        { max: FIELD_SPECS[FIELD.buckets].maxItems }
      )}
      invalid={Boolean(error)}
      error={error}
    >
      <CommitInput
        aria-label={t('buckets-field.aria', 'Bucket bounds')}
        data-testid={testIds.queryEditor.buckets}
        placeholder={t('buckets-field.placeholder', 'none')}
        value={(value ?? []).join(', ')}
        minWidth={20}
        onCommit={(text) => {
          const parsed = parseQuantiles(text ?? '');
          if (parsed?.some((n) => Number.isNaN(n))) {
            setParseError(t('buckets-field.not-numbers', 'Bucket bounds must be numbers such as 0.25, 0.5, 0.75.'));
            return;
          }
          setParseError(undefined);
          onChange(parsed);
        }}
      />
    </QueryField>
  );
}
