import React from 'react';
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
      label="Headroom"
      description={`Safety margin 0–0.9: capacity × (1 − headroom). Empty = ${DEFAULT_HEADROOM}.`}
      invalid={Boolean(invalid)}
      error={invalid}
    >
      <CommitInput
        aria-label="Headroom"
        data-testid={testIds.queryEditor.headroom}
        kind="number"
        placeholder={String(DEFAULT_HEADROOM)}
        value={value}
        onCommit={(text) => onChange(toNumber(text))}
      />
    </QueryField>
  );
}
