import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { testIds } from '../../../components/testIds';
import { DEFAULT_HEADROOM } from '../../types';
import { CommitInput, toNumber } from '../CommitInput';
import { QueryField } from './QueryField';

interface Props {
  value?: number;
  invalid?: string;
  onChange: (headroom: number | undefined) => void;
}

/** CapacitySection edits the capacity query's headroom: the share of the KV pool kept free for bursts. */
export function CapacitySection({ value, invalid, onChange }: Props) {
  return (
    <QueryField
      label={t('capacity-section.headroom.label', 'Headroom')}
      description={tf(
        'capacity-section.headroom.description',
        'Safety margin 0–0.9: capacity × (1 − headroom). Empty = {{headroom}}.',
        { headroom: DEFAULT_HEADROOM }
      )}
      invalid={Boolean(invalid)}
      error={invalid}
    >
      <CommitInput
        aria-label={t('capacity-section.headroom.aria', 'Headroom')}
        data-testid={testIds.queryEditor.headroom}
        kind="number"
        placeholder={String(DEFAULT_HEADROOM)}
        value={value}
        onCommit={(text) => onChange(toNumber(text))}
      />
    </QueryField>
  );
}
