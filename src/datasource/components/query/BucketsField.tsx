import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { testIds } from '../../../components/testIds';
import { FIELD } from '../../catalog.gen';
import { FIELD_SPECS } from '../../types';
import { NumberListField } from './NumberListField';

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
  return (
    <NumberListField
      label={t('buckets-field.label', 'Distribution')}
      description={tf(
        'buckets-field.description',
        'Upper bounds of up to {{max}} buckets, increasing and comma-separated: each step counts the series in each (a last +Inf bucket takes the rest), for a heatmap. Empty = the series themselves.',
        { max: FIELD_SPECS[FIELD.buckets].maxItems }
      )}
      aria={t('buckets-field.aria', 'Bucket bounds')}
      testId={testIds.queryEditor.buckets}
      placeholder={t('buckets-field.placeholder', 'none')}
      notNumbers={t('buckets-field.not-numbers', 'Bucket bounds must be numbers such as 0.25, 0.5, 0.75.')}
      value={value}
      invalid={invalid}
      onChange={onChange}
    />
  );
}
