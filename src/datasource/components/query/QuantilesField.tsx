import React, { useState } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { testIds } from '../../../components/testIds';
import { DEFAULT_QUANTILES } from '../../types';
import { CommitInput } from '../CommitInput';
import { QueryField } from './QueryField';

interface Props {
  value?: number[];
  invalid?: string;
  onChange: (quantiles: number[] | undefined) => void;
}

/** parseQuantiles reads "0.5, 0.99" into numbers; undefined for empty text, NaN entries for bad ones. */
export function parseQuantiles(text: string): number[] | undefined {
  const parts = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return parts.length ? parts.map(Number) : undefined;
}

/** QuantilesField edits the latency quantiles as a comma-separated list; empty uses the defaults. */
export function QuantilesField({ value, invalid, onChange }: Props) {
  const [parseError, setParseError] = useState<string>();
  const error = parseError ?? invalid;
  return (
    <QueryField
      label={t('quantiles-field.quantiles.label', 'Quantiles')}
      description={tf('quantiles-field.description', 'Comma-separated, between 0 and 1. Empty = {{defaults}}.', {
        defaults: DEFAULT_QUANTILES.join(', '),
      })}
      invalid={Boolean(error)}
      error={error}
    >
      <CommitInput
        aria-label={t('quantiles-field.quantiles.aria', 'Quantiles')}
        data-testid={testIds.queryEditor.quantiles}
        placeholder={DEFAULT_QUANTILES.join(', ')}
        value={(value ?? []).join(', ')}
        minWidth={20}
        onCommit={(text) => {
          const parsed = parseQuantiles(text ?? '');
          if (parsed?.some((n) => Number.isNaN(n))) {
            setParseError(t('quantiles-field.not-numbers', 'Quantiles must be numbers such as 0.5, 0.9, 0.99.'));
            return;
          }
          setParseError(undefined);
          onChange(parsed);
        }}
      />
    </QueryField>
  );
}
