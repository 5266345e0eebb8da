import React from 'react';
import { Field, Input } from '@grafana/ui';

interface Props {
  label: string;
  description: string;
  placeholder: string;
  value?: string;
  error?: string;
  testId: string;
  onChange: (value: string | undefined) => void;
}

/** DurationInput edits one Go-style duration setting such as "5s", with its validation message. */
export function DurationInput({ label, description, placeholder, value, error, testId, onChange }: Props) {
  return (
    <Field label={label} description={description} invalid={Boolean(error)} error={error}>
      <Input
        aria-label={label}
        data-testid={testId}
        placeholder={placeholder}
        value={value ?? ''}
        width={16}
        onChange={(ev) => onChange(ev.currentTarget.value.trim() || undefined)}
      />
    </Field>
  );
}
