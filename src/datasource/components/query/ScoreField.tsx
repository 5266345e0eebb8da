import React from 'react';
import { t } from '@grafana/i18n';
import { Combobox } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { BALANCE_SCORES } from '../../types';
import type { Score } from '../../catalog.gen';
import { QueryField } from './QueryField';

interface Props {
  value?: Score;
  onChange: (score: Score | undefined) => void;
}

/** ScoreField restricts a balance query to one imbalance score, without the per-rank loads; cleared, it returns all. */
export function ScoreField({ value, onChange }: Props) {
  return (
    <QueryField
      label={t('score-field.label', 'Score')}
      description={t(
        'score-field.description',
        'One imbalance score only, for alert rules. Empty = loads and every score.'
      )}
    >
      <Combobox<Score>
        aria-label={t('score-field.aria', 'Score')}
        data-testid={testIds.queryEditor.score}
        options={BALANCE_SCORES.map((s) => ({ value: s, label: s }))}
        value={value ?? null}
        isClearable
        width={24}
        onChange={(opt) => onChange(opt?.value)}
      />
    </QueryField>
  );
}
