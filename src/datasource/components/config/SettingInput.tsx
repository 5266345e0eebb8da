import React from 'react';
import { Field } from '@grafana/ui';
import { CommitInput, toNumber } from '../CommitInput';

interface Props<T extends string | number> {
  label: string;
  description: string;
  placeholder: string;
  value?: T;
  error?: string;
  testId: string;
  onChange: (value: T | undefined) => void;
}

/** DurationInput edits one Go-style duration setting such as "5s", with its validation message. */
export function DurationInput(props: Props<string>) {
  return <SettingInput {...props} kind="duration" parse={(text) => text} />;
}

/** NumberInput edits one numeric setting such as the memory cap, with its validation message. */
export function NumberInput(props: Props<number>) {
  return <SettingInput {...props} kind="number" parse={toNumber} />;
}

function SettingInput<T extends string | number>({
  label,
  description,
  placeholder,
  value,
  error,
  testId,
  onChange,
  kind,
  parse,
}: Props<T> & { kind: 'duration' | 'number'; parse: (text: string | undefined) => T | undefined }) {
  return (
    <Field label={label} description={description} invalid={Boolean(error)} error={error}>
      <CommitInput
        aria-label={label}
        data-testid={testId}
        kind={kind}
        placeholder={placeholder}
        value={value}
        onCommit={(text) => onChange(parse(text))}
      />
    </Field>
  );
}
