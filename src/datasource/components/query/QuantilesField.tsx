import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { testIds } from '../../../components/testIds';
import { DEFAULT_QUANTILES } from '../../types';
import { NumberListField } from './NumberListField';

interface Props {
  value?: number[];
  invalid?: string;
  onChange: (quantiles: number[] | undefined) => void;
}

/** QuantilesField edits the latency quantiles as a comma-separated list; empty uses the defaults. */
export function QuantilesField({ value, invalid, onChange }: Props) {
  return (
    <NumberListField
      label={t('quantiles-field.quantiles.label', 'Quantiles')}
      description={tf('quantiles-field.description', 'Comma-separated, between 0 and 1. Empty = {{defaults}}.', {
        defaults: DEFAULT_QUANTILES.join(', '),
      })}
      aria={t('quantiles-field.quantiles.aria', 'Quantiles')}
      testId={testIds.queryEditor.quantiles}
      placeholder={DEFAULT_QUANTILES.join(', ')}
      notNumbers={t('quantiles-field.not-numbers', 'Quantiles must be numbers such as 0.5, 0.9, 0.99.')}
      value={value}
      invalid={invalid}
      onChange={onChange}
    />
  );
}
