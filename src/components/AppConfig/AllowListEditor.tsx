import React, { useState } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../i18n';
import { Alert, Button, Field, Input, Stack, Switch } from '@grafana/ui';
import { testIds } from '../testIds';
import { ProfilerConfigSetting, useSaveSettings } from './profilerApi';
import { hasErrors, validateAllowList } from './validate';
import type { AppSettings } from './AppConfig';

interface Props {
  enabled: boolean;
  pinned: boolean;
  settings: AppSettings;
  /** onSaved is called with the stored settings. */
  onSaved: (s: AppSettings) => void;
}

/** AllowListEditor lets an Admin list the profiler config files the app may touch, stored in the app's jsonData. */
export function AllowListEditor({ enabled, pinned, settings, onSaved }: Props) {
  const [rows, setRows] = useState<ProfilerConfigSetting[]>(settings.profilerConfigs ?? []);
  const [allowEditors, setAllowEditors] = useState(!!settings.allowEditorsToWrite);
  const { saving, saveError, save: store } = useSaveSettings(enabled, pinned, onSaved);
  const errors = validateAllowList(rows);

  const update = (i: number, patch: Partial<ProfilerConfigSetting>) =>
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));

  const save = () => {
    const next: AppSettings = {
      ...settings,
      profilerConfigs: rows.map((r) => ({
        name: r.name.trim(),
        path: r.path.trim(),
        metricsUrl: r.metricsUrl?.trim() || undefined,
        overwriteReadOnly: r.overwriteReadOnly || undefined,
      })),
      allowEditorsToWrite: allowEditors,
    };
    return store(next);
  };

  return (
    <div data-testid={testIds.appConfig.allowList}>
      <Stack direction="column" gap={1}>
        <h3>{t('allow-list-editor.heading', 'Allow-listed profiler config files')}</h3>
        <p>
          {t(
            'allow-list-editor.one-ms-service-profiler-config',
            'One ms_service_profiler_config.json per vLLM-Ascend deployment, at the path where Grafana sees it (usually a volume shared with the inference host). The app reads and writes no other file.'
          )}
        </p>
        {rows.map((r, i) => (
          <Stack key={i} direction="row" gap={1} alignItems="flex-start" wrap="wrap">
            <Field label={t('allow-list-editor.name.label', 'Name')} invalid={!!errors[i].name} error={errors[i].name}>
              <Input
                id={`inferscope-allow-list-name-${i}`}
                value={r.name}
                width={20}
                // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                placeholder="ascend-dp2"
                onChange={(e) => update(i, { name: e.currentTarget.value })}
                data-testid={testIds.appConfig.allowListName(i)}
              />
            </Field>
            <Field
              label={t('allow-list-editor.config-file-path.label', 'Config file path')}
              invalid={!!errors[i].path}
              error={errors[i].path}
            >
              <Input
                id={`inferscope-allow-list-path-${i}`}
                value={r.path}
                width={60}
                // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                placeholder="/var/lib/inferscope/ascend/ms_service_profiler_config.json"
                onChange={(e) => update(i, { path: e.currentTarget.value })}
                data-testid={testIds.appConfig.allowListPath(i)}
              />
            </Field>
            <Field
              label={t('allow-list-editor.metrics-url-optional.label', 'Metrics URL (optional)')}
              invalid={!!errors[i].metricsUrl}
              error={errors[i].metricsUrl}
            >
              <Input
                id={`inferscope-allow-list-metrics-url-${i}`}
                value={r.metricsUrl ?? ''}
                width={40}
                // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                placeholder="http://vllm-ascend:8000/metrics"
                onChange={(e) => update(i, { metricsUrl: e.currentTarget.value })}
                data-testid={testIds.appConfig.allowListMetricsUrl(i)}
              />
            </Field>
            <Field
              label={t('allow-list-editor.overwrite-if-read-only.label', 'Overwrite if read-only')}
              description={t(
                'allow-list-editor.replace-the-file-even-when.description',
                'Replace the file even when it has no write permission'
              )}
            >
              <Switch
                id={`inferscope-allow-list-overwrite-read-only-${i}`}
                value={!!r.overwriteReadOnly}
                onChange={(e) => update(i, { overwriteReadOnly: e.currentTarget.checked })}
                data-testid={testIds.appConfig.allowListOverwriteReadOnly(i)}
              />
            </Field>
            <Field label={t('allow-list-editor.remove.label', 'Remove')}>
              <Button
                variant="secondary"
                icon="trash-alt"
                aria-label={tf('allow-list-editor.remove-row', 'Remove {{name}}', {
                  name: r.name || tf('allow-list-editor.row', 'row {{n}}', { n: i + 1 }),
                })}
                onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}
                data-testid={testIds.appConfig.allowListRemove(i)}
              />
            </Field>
          </Stack>
        ))}
        <div>
          <Button
            variant="secondary"
            icon="plus"
            onClick={() => setRows((rs) => [...rs, { name: '', path: '', metricsUrl: '' }])}
            data-testid={testIds.appConfig.allowListAdd}
          >
            {t('allow-list-editor.add-file', 'Add file')}
          </Button>
        </div>
        <Field
          label={t(
            'allow-list-editor.editors-may-switch-metric-collection.label',
            'Editors may switch metric collection'
          )}
          description={t('allow-list-editor.otherwise-only-admins-may.description', 'Otherwise only Admins may.')}
        >
          <Switch
            id="inferscope-allow-editors"
            value={allowEditors}
            onChange={() => setAllowEditors((v) => !v)}
            data-testid={testIds.appConfig.allowEditors}
          />
        </Field>
        {saveError && (
          <div data-testid={testIds.appConfig.saveError}>
            <Alert severity="error" title={t('allow-list-editor.saving-failed.title', 'Saving failed')}>
              {saveError}
            </Alert>
          </div>
        )}
        <div>
          <Button onClick={save} disabled={saving || hasErrors(errors)} data-testid={testIds.appConfig.save}>
            {saving ? t('allow-list-editor.saving', 'Saving…') : t('allow-list-editor.save', 'Save allow-list')}
          </Button>
        </div>
      </Stack>
    </div>
  );
}
