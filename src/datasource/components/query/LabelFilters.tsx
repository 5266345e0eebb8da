import React, { useState } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { Button, FieldValidationMessage, Input, Stack } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import type { DataSource } from '../../datasource';
import { MatcherPicker } from './MatcherPicker';
import { QueryField } from './QueryField';

interface Props {
  datasource: DataSource;
  value?: Record<string, string>;
  invalid?: string;
  onChange: (labels: Record<string, string> | undefined) => void;
}

type Row = { name: string; value: string };

function toLabels(rows: Row[]): Record<string, string> | undefined {
  const named = rows.filter((r) => r.name.trim());
  return named.length ? Object.fromEntries(named.map((r) => [r.name.trim(), r.value])) : undefined;
}

/** LabelFilters edits a raw query's label matchers: label name =~ regex, values listed from the label-values resource. */
export function LabelFilters({ datasource, value, invalid, onChange }: Props) {
  const [rows, setRows] = useState<Row[]>(() => Object.entries(value ?? {}).map(([name, v]) => ({ name, value: v })));
  const commit = (next: Row[]) => {
    setRows(next);
    onChange(toLabels(next));
  };
  const setRow = (i: number, patch: Partial<Row>) => rows.map((r, j) => (j === i ? { ...r, ...patch } : r));
  return (
    <QueryField
      label={t('label-filters.label-filters.label', 'Label filters')}
      description={t(
        'label-filters.extra-matchers-label-regular-expression.description',
        'Extra matchers: label =~ regular expression.'
      )}
    >
      <Stack direction="column" gap={1}>
        {invalid && <FieldValidationMessage>{invalid}</FieldValidationMessage>}
        {rows.map((row, i) => (
          <Stack key={i} direction="row" gap={1} alignItems="flex-end">
            <QueryField label={tf('label-filters.name', 'Label {{n}} name', { n: i + 1 })}>
              <Input
                aria-label={tf('label-filters.name', 'Label {{n}} name', { n: i + 1 })}
                data-testid={testIds.queryEditor.labelName(i)}
                // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                placeholder="finished_reason"
                value={row.name}
                width={24}
                onChange={(ev) => setRows(setRow(i, { name: ev.currentTarget.value }))}
                onBlur={() => onChange(toLabels(rows))}
              />
            </QueryField>
            <MatcherPicker
              datasource={datasource}
              resource="label-values"
              resourceLabel={row.name.trim() || undefined}
              label={tf('label-filters.value', 'Label {{n}} value', { n: i + 1 })}
              description={t('label-filters.regex.description', '=~ regex')}
              value={row.value}
              testId={testIds.queryEditor.labelValue(i)}
              width={28}
              onChange={(v) => commit(setRow(i, { value: v ?? '' }))}
            />
            <Button
              aria-label={tf('label-filters.remove', 'Remove label filter {{n}}', { n: i + 1 })}
              data-testid={testIds.queryEditor.removeLabel(i)}
              icon="trash-alt"
              variant="secondary"
              onClick={() => commit(rows.filter((_, j) => j !== i))}
            />
          </Stack>
        ))}
        <div>
          <Button
            data-testid={testIds.queryEditor.addLabel}
            icon="plus"
            variant="secondary"
            size="sm"
            onClick={() => setRows([...rows, { name: '', value: '' }])}
          >
            {t('label-filters.add-label-filter', 'Add label filter')}
          </Button>
        </div>
      </Stack>
    </QueryField>
  );
}
