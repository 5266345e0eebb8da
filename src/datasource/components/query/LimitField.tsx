import React from 'react';
import { t } from '@grafana/i18n';
import { RadioButtonGroup, Stack } from '@grafana/ui';
import { tf } from '../../../i18n';
import { testIds } from '../../../components/testIds';
import { FIELD } from '../../catalog.gen';
import { FIELD_SPECS, VllmQuery } from '../../types';
import { CommitInput, toNumber } from '../CommitInput';
import { QueryField } from './QueryField';

interface Props {
  limit?: number;
  rank?: string;
  invalid?: string;
  onChange: (patch: Partial<VllmQuery>) => void;
}

/**
 * LimitField keeps only a query's worst series: the limit series of each output with the highest (or lowest) mean
 * over the range, the way the fleet overview shows its 10 slowest endpoints instead of every engine's line.
 */
export function LimitField({ limit, rank, invalid, onChange }: Props) {
  // The catalog lists the ranks highest first; the first is the default, sent as nothing.
  const [highest, lowest] = FIELD_SPECS[FIELD.rank].values ?? [];
  const options = [
    { value: highest, label: t('limit-field.rank.highest', 'Highest') },
    { value: lowest, label: t('limit-field.rank.lowest', 'Lowest') },
  ];
  return (
    <QueryField
      label={t('limit-field.label', 'Top')}
      description={tf(
        'limit-field.description',
        'Keep only this many series of each output (1–{{max}}), ranked by their mean over the range. Empty = all.',
        { max: FIELD_SPECS[FIELD.limit].max }
      )}
      invalid={Boolean(invalid)}
      error={invalid}
    >
      <Stack direction="row" gap={1}>
        <CommitInput
          aria-label={t('limit-field.aria', 'Series kept')}
          data-testid={testIds.queryEditor.limit}
          kind="number"
          minWidth={8}
          placeholder={t('limit-field.placeholder', 'all')}
          value={limit}
          onCommit={(text) => onChange({ limit: toNumber(text) || undefined })}
        />
        <div data-testid={testIds.queryEditor.rank}>
          <RadioButtonGroup<string>
            options={options}
            value={rank ?? highest}
            disabled={!limit}
            onChange={(v) => onChange({ rank: v === highest ? undefined : v })}
          />
        </div>
      </Stack>
    </QueryField>
  );
}
