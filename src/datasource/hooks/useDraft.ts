import { useState } from 'react';

/**
 * useDraft keeps the text of an input that commits on blur: it starts from, and resets to, `committed` whenever that
 * changes from outside (e.g. the query is replaced), without an effect.
 */
export function useDraft(committed: string): [string, (text: string) => void] {
  const [draft, setDraft] = useState(committed);
  const [seen, setSeen] = useState(committed);
  if (seen !== committed) {
    setSeen(committed);
    setDraft(committed);
  }
  return [draft, setDraft];
}
