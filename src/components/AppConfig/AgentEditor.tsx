import React, { useState } from 'react';
import { t } from '@grafana/i18n';
import { Alert, Button, Field, Input, SecretInput, Stack, TextArea } from '@grafana/ui';
import { tf } from '../../i18n';
import { testIds } from '../testIds';
import { AGENT_CLIENT_KEY_FIELD, AgentSetting, agentTokenField } from './agentApi';
import { useSaveSettings } from './profilerApi';
import { NAME_PATTERN } from './validate';
import type { AppSettings } from './AppConfig';

interface Props {
  enabled: boolean;
  pinned: boolean;
  settings: AppSettings;
  /** secureFields says which secure fields are set (Grafana never sends their values back). */
  secureFields: Record<string, boolean | undefined>;
  onSaved: (s: AppSettings) => void;
}

interface Row extends AgentSetting {
  /** token is a new token typed in this session; undefined keeps the stored one. */
  token?: string;
}

/** AgentEditor lets an Admin list the profiler agents, their tokens and the TLS material the app trusts them by. */
export function AgentEditor({ enabled, pinned, settings, secureFields, onSaved }: Props) {
  const [rows, setRows] = useState<Row[]>(settings.agents ?? []);
  const [caCert, setCaCert] = useState(settings.agentCaCert ?? '');
  const [clientCert, setClientCert] = useState(settings.agentClientCert ?? '');
  const [clientKey, setClientKey] = useState<string | undefined>();
  const { saving, saveError, save: store } = useSaveSettings(enabled, pinned, onSaved);
  const update = (i: number, patch: Partial<Row>) =>
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const problems = rows.map((r) => rowProblem(r, rows));

  const save = () => {
    const next: AppSettings = {
      ...settings,
      agents: rows.map((r) => ({
        name: r.name.trim(),
        url: r.url.trim(),
        metricsUrl: r.metricsUrl?.trim() || undefined,
      })),
      agentCaCert: caCert.trim() || undefined,
      agentClientCert: clientCert.trim() || undefined,
    };
    const secure: Record<string, string> = {};
    for (const r of rows) {
      if (r.token !== undefined) {
        secure[agentTokenField(r.name.trim())] = r.token;
      }
    }
    if (clientKey !== undefined) {
      secure[AGENT_CLIENT_KEY_FIELD] = clientKey;
    }
    return store(next, Object.keys(secure).length ? secure : undefined);
  };

  return (
    <div data-testid={testIds.appConfig.agentEditor}>
      <Stack direction="column" gap={1}>
        <h3>{t('agent-editor.heading', 'Profiler agents')}</h3>
        <p>
          {t(
            'agent-editor.intro',
            'When Grafana does not share a disk with a vLLM-Ascend host (Kubernetes, separate machines), run inferscope-agent beside the server and list it here with the token it runs with. The app calls it over HTTPS; the token is stored encrypted and never sent back to the browser.'
          )}
        </p>
        {rows.map((r, i) => {
          const tokenSet = !!secureFields[agentTokenField(r.name)] && r.token === undefined;
          return (
            <Stack key={i} direction="row" gap={1} alignItems="flex-start" wrap="wrap">
              <Field label={t('allow-list-editor.name.label', 'Name')} invalid={!!problems[i]} error={problems[i]}>
                <Input
                  id={`inferscope-agent-name-${i}`}
                  value={r.name}
                  width={20}
                  // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                  placeholder="ascend-k8s"
                  onChange={(e) => update(i, { name: e.currentTarget.value })}
                  data-testid={testIds.appConfig.agentEditorName(i)}
                />
              </Field>
              <Field label={t('agent-editor.url', 'Agent URL')}>
                <Input
                  id={`inferscope-agent-url-${i}`}
                  value={r.url}
                  width={36}
                  // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                  placeholder="https://vllm-ascend-0.inference:9443"
                  onChange={(e) => update(i, { url: e.currentTarget.value })}
                  data-testid={testIds.appConfig.agentEditorUrl(i)}
                />
              </Field>
              <Field label={t('allow-list-editor.metrics-url-optional.label', 'Metrics URL (optional)')}>
                <Input
                  id={`inferscope-agent-metrics-url-${i}`}
                  value={r.metricsUrl ?? ''}
                  width={36}
                  // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                  placeholder="http://vllm-ascend-0.inference:8000/metrics"
                  onChange={(e) => update(i, { metricsUrl: e.currentTarget.value })}
                />
              </Field>
              <Field label={t('agent-editor.token', 'Token')}>
                <SecretInput
                  id={`inferscope-agent-token-${i}`}
                  width={28}
                  value={r.token ?? ''}
                  isConfigured={tokenSet}
                  onReset={() => update(i, { token: '' })}
                  onChange={(e) => update(i, { token: e.currentTarget.value })}
                  data-testid={testIds.appConfig.agentEditorToken(i)}
                />
              </Field>
              <Field label={t('allow-list-editor.remove.label', 'Remove')}>
                <Button
                  variant="secondary"
                  icon="trash-alt"
                  aria-label={tf('allow-list-editor.remove-row', 'Remove {{name}}', { name: r.name || String(i + 1) })}
                  onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}
                />
              </Field>
            </Stack>
          );
        })}
        <div>
          <Button
            variant="secondary"
            icon="plus"
            onClick={() => setRows((rs) => [...rs, { name: '', url: '', token: '' }])}
            data-testid={testIds.appConfig.agentEditorAdd}
          >
            {t('agent-editor.add', 'Add agent')}
          </Button>
        </div>
        <Field
          label={t('agent-editor.ca', "CA certificate of the agents' TLS certificates (PEM)")}
          description={t('agent-editor.ca-description', "Empty trusts the Grafana server's system roots.")}
        >
          <TextArea
            id="inferscope-agent-ca"
            rows={3}
            value={caCert}
            onChange={(e) => setCaCert(e.currentTarget.value)}
          />
        </Field>
        <Field
          label={t('agent-editor.client-cert', 'Client certificate for agents that require one (mTLS, PEM)')}
          description={t(
            'agent-editor.client-cert-description',
            'Optional; its private key below is stored encrypted.'
          )}
        >
          <TextArea
            id="inferscope-agent-client-cert"
            rows={3}
            value={clientCert}
            onChange={(e) => setClientCert(e.currentTarget.value)}
          />
        </Field>
        <Field label={t('agent-editor.client-key', 'Client private key (PEM)')}>
          <SecretInput
            id="inferscope-agent-client-key"
            width={40}
            value={clientKey ?? ''}
            isConfigured={!!secureFields[AGENT_CLIENT_KEY_FIELD] && clientKey === undefined}
            onReset={() => setClientKey('')}
            onChange={(e) => setClientKey(e.currentTarget.value)}
          />
        </Field>
        {saveError && (
          <Alert severity="error" title={t('allow-list-editor.saving-failed.title', 'Saving failed')}>
            {saveError}
          </Alert>
        )}
        <div>
          <Button
            onClick={save}
            disabled={saving || problems.some(Boolean)}
            data-testid={testIds.appConfig.agentEditorSave}
          >
            {saving ? t('allow-list-editor.saving', 'Saving…') : t('agent-editor.save', 'Save agents')}
          </Button>
        </div>
      </Stack>
    </div>
  );
}

/** rowProblem is what keeps a row from being saved, or ''. The backend checks the same again. */
function rowProblem(r: Row, rows: Row[]): string {
  if (!NAME_PATTERN.test(r.name.trim())) {
    return t(
      'allow-list-editor.errors.name-pattern',
      "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    );
  }
  if (rows.filter((x) => x.name.trim() === r.name.trim()).length > 1) {
    return t('allow-list-editor.errors.name-twice', 'This name is used twice');
  }
  if (!/^https?:\/\/[^/@?#\s]+\/?$/.test(r.url.trim())) {
    return t('agent-editor.bad-url', 'The agent URL must be https://host:port');
  }
  return '';
}
