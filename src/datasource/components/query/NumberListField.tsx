import React, { useState } from 'react';
import { CommitInput } from '../CommitInput';
import { QueryField } from './QueryField';

/** parseNumberList reads "0.5, 0.99" into numbers; undefined for empty text, NaN entries for bad ones. */
export function parseNumberList(text: string): number[] | undefined {
  const parts = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return parts.length ? parts.map(Number) : undefined;
}

interface Props {
  label: string;
  description: string;
  aria: string;
  testId: string;
  placeholder: string;
  /** notNumbers is the message for text that holds something other than numbers. */
  notNumbers: string;
  value?: number[];
  invalid?: string;
  onChange: (values: number[] | undefined) => void;
}

/** NumberListField edits a comma-separated list of numbers (quantiles, bucket bounds); empty sends nothing. */
export function NumberListField({
  label,
  description,
  aria,
  testId,
  placeholder,
  notNumbers,
  value,
  invalid,
  onChange,
}: Props) {
  const [parseError, setParseError] = useState<string>();
  const error = parseError ?? invalid;
  return (
    <QueryField label={label} description={description} invalid={Boolean(error)} error={error}>
      <CommitInput
        aria-label={aria}
        data-testid={testId}
        placeholder={placeholder}
        value={(value ?? []).join(', ')}
        minWidth={20}
        onCommit={(text) => {
          const parsed = parseNumberList(text ?? '');
          if (parsed?.some((n) => Number.isNaN(n))) {
            setParseError(notNumbers);
            return;
          }
          setParseError(undefined);
          onChange(parsed);
        }}
      />
    </QueryField>
  );
}
