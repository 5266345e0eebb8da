import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../i18n';
import { localized } from '../localized';
import { QueryEditorProps } from '@grafana/data';
import { Field, Input, RadioButtonGroup, Stack } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import type { DataSource } from '../datasource';
import { useDraft } from '../hooks/useDraft';
import { useResource } from '../hooks/useResource';
import { VARIABLE_RESOURCES, VariableQuery, VariableResource, VllmOptions, VllmQuery } from '../types';

type Props = QueryEditorProps<DataSource, VllmQuery, VllmOptions, VariableQuery>;

/** normalizeVariableQuery reads stored variable queries, including legacy plain strings such as "models". */
export function normalizeVariableQuery(query: VariableQuery | string | undefined): VariableQuery {
  if (typeof query === 'string') {
    const [resource, label] = query.split(':', 2);
    return { refId: 'variable', queryType: 'variable', resource: (resource || 'models') as VariableResource, label };
  }
  return { ...query, refId: query?.refId ?? 'variable', queryType: 'variable', resource: query?.resource ?? 'models' };
}

/** VariableQueryEditor picks what a template variable lists: models, endpoints, engines / DP ranks, metric names or label values. */
export function VariableQueryEditor({ query: stored, onChange, datasource }: Props) {
  const query = normalizeVariableQuery(stored as VariableQuery | string | undefined);
  const [label, setLabel] = useDraft(query.label ?? '');
  const preview = useResource(
    datasource,
    query.resource,
    query.label,
    query.resource === 'label-values' && !query.label
  );
  const resources = localized('variable-resource', VARIABLE_RESOURCES);
  const selected = resources.find((r) => r.value === query.resource);

  const change = (patch: Partial<VariableQuery>) => {
    const next: VariableQuery = { ...query, ...patch };
    if (next.resource !== 'label-values') {
      delete next.label;
    }
    onChange(next);
  };

  return (
    <Stack direction="column" gap={0}>
      <Field label={t('variable-query-editor.list.label', 'List')} description={selected?.description}>
        <div data-testid={testIds.variableEditor.resource}>
          <RadioButtonGroup<VariableResource>
            options={resources}
            value={query.resource}
            onChange={(resource) => change({ resource })}
          />
        </div>
      </Field>
      {query.resource === 'label-values' && (
        <Field
          label={t('variable-query-editor.label.label', 'Label')}
          description={t(
            'variable-query-editor.label-whose-values-are-listed.description',
            'Label whose values are listed, e.g. finished_reason.'
          )}
        >
          <Input
            aria-label={t('variable-query-editor.label.aria', 'Label')}
            data-testid={testIds.variableEditor.label}
            // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
            placeholder="finished_reason"
            value={label}
            width={32}
            onChange={(ev) => setLabel(ev.currentTarget.value)}
            onBlur={() => change({ label: label.trim() || undefined })}
          />
        </Field>
      )}
      <div data-testid={testIds.variableEditor.preview} aria-live="polite">
        {preview.error
          ? tf('variable-query-editor.could-not-list', 'Could not list values: {{error}}', { error: preview.error })
          : preview.loading
            ? t('variable-query-editor.loading', 'Loading values…')
            : preview.values.length === 0
              ? tf('variable-query-editor.count', '{{n}} value(s)', { n: 0 })
              : tf('variable-query-editor.values', '{{n}} value(s): {{values}}', {
                  n: preview.values.length,
                  values: preview.values.slice(0, 8).join(', ') + (preview.values.length > 8 ? ', …' : ''),
                })}
      </div>
    </Stack>
  );
}
