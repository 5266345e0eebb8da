import React from 'react';
import { AutoSizeInput } from '@grafana/ui';
import { useDraft } from '../hooks/useDraft';

interface Props {
  'aria-label': string;
  'data-testid'?: string;
  placeholder?: string;
  /** value is the committed value as text; the input shows a draft of it while focused. */
  value?: string | number;
  minWidth?: number;
  maxWidth?: number;
  invalid?: boolean;
  /** kind only changes the keyboard: numbers get a numeric one. Parsing and validation stay with the caller. */
  kind?: 'text' | 'duration' | 'number';
  /** onCommit gets the trimmed text (undefined when empty) on blur or Enter, and only when it changed. */
  onCommit: (text: string | undefined) => void;
}

/**
 * CommitInput is the editors' one input for text, durations and numbers: it grows with its content and commits on
 * blur or Enter, as Grafana's own query editors do, so a query runs once per edit rather than once per keystroke.
 */
export function CommitInput({ value, kind = 'text', onCommit, minWidth = 12, maxWidth = 48, ...rest }: Props) {
  const committed = value === undefined ? '' : String(value);
  const [text, setText] = useDraft(committed);
  const commit = () => {
    const t = text.trim();
    if (t !== committed) {
      onCommit(t === '' ? undefined : t);
    }
  };
  return (
    <AutoSizeInput
      {...rest}
      inputMode={kind === 'number' ? 'decimal' : undefined}
      value={text}
      minWidth={minWidth}
      maxWidth={maxWidth}
      onChange={(ev) => setText(ev.currentTarget.value)}
      onBlur={commit}
      onKeyDown={(ev) => ev.key === 'Enter' && commit()}
    />
  );
}

/** toNumber reads a committed number field: undefined stays undefined, text becomes a number (NaN if it is none). */
export function toNumber(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}
