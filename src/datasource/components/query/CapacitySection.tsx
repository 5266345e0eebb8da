import React from 'react';
import { Field, Input } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { useDraft } from '../../hooks/useDraft';
import { DEFAULT_HEADROOM } from '../../types';

interface Props {
  value?: number;
  invalid?: string;
  onChange: (headroom: number | undefined) => void;
}

/** CapacitySection edits the capacity query's headroom: the share of the KV pool kept free for bursts. */
export function CapacitySection({ value, invalid, onChange }: Props) {
  const [text, setText] = useDraft(value === undefined ? '' : String(value));
  return (
    <Field
      label="Headroom"
      description={`Safety margin 0–0.9: capacity × (1 − headroom). Empty = ${DEFAULT_HEADROOM}.`}
      invalid={Boolean(invalid)}
      error={invalid}
    >
      <Input
        aria-label="Headroom"
        data-testid={testIds.queryEditor.headroom}
        type="number"
        min={0}
        max={0.9}
        step={0.05}
        placeholder={String(DEFAULT_HEADROOM)}
        value={text}
        width={16}
        onChange={(ev) => setText(ev.currentTarget.value)}
        onBlur={() => onChange(text.trim() === '' ? undefined : Number(text))}
      />
    </Field>
  );
}
