import React, { useMemo } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { getTemplateSrv } from '@grafana/runtime';
import { Combobox, ComboboxOption } from '@grafana/ui';
import type { DataSource } from '../../datasource';
import { useResource } from '../../hooks/useResource';
import { VariableResource } from '../../types';
import { QueryField } from './QueryField';

interface Props {
  datasource: DataSource;
  resource: VariableResource;
  label: string;
  description: string;
  value?: string;
  invalid?: string;
  testId: string;
  onChange: (value: string | undefined) => void;
  /** resourceLabel is the label name of a label-values resource. */
  resourceLabel?: string;
  width?: number;
}

/** variableOptions offers the dashboard's template variables as $name options. */
export function variableOptions(): Array<ComboboxOption<string>> {
  return getTemplateSrv()
    .getVariables()
    .map((v) => ({
      value: `$${v.name}`,
      label: `$${v.name}`,
      description: t('matcher-picker.template-variable', 'Template variable'),
    }));
}

/**
 * MatcherPicker picks a value listed by a backend resource, a template variable, or any typed regular expression;
 * an empty value matches everything.
 */
export function MatcherPicker({
  datasource,
  resource,
  label,
  description,
  value,
  invalid,
  testId,
  onChange,
  resourceLabel,
  width = 32,
}: Props) {
  const state = useResource(datasource, resource, resourceLabel, resource === 'label-values' && !resourceLabel);
  const options = useMemo(
    () => [...state.values.map((v) => ({ value: v, label: v })), ...variableOptions()],
    [state.values]
  );
  return (
    <QueryField
      label={label}
      description={
        state.error
          ? tf('matcher-picker.could-not-list', '{{description}} Could not list values: {{error}}', {
              description,
              error: state.error,
            })
          : description
      }
      invalid={Boolean(invalid)}
      error={invalid}
    >
      <Combobox<string>
        aria-label={label}
        data-testid={testId}
        options={options}
        value={value ? { value, label: value } : null}
        loading={state.loading}
        placeholder={t('matcher-picker.all-regex-allowed.placeholder', 'all (regex allowed)')}
        createCustomValue
        customValueDescription={t('matcher-picker.use-as-regex', 'Use as regular expression')}
        isClearable
        width={width}
        onChange={(opt) => onChange(opt?.value || undefined)}
      />
    </QueryField>
  );
}
