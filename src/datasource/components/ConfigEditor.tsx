import React from 'react';
import { t } from '@grafana/i18n';
import { localized } from '../localized';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { AdvancedHttpSettings, Auth, AuthMethod, ConnectionSettings, convertLegacyAuthProps } from '@grafana/plugin-ui';
import { Field, FieldSet, Input, RadioButtonGroup, Stack, Switch } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import { MODE, SETTINGS } from '../settings.gen';
import { Mode, VllmOptions, VllmSecureOptions } from '../types';
import { validateSettings } from '../validation';
import { AcceleratorPeaks } from './config/AcceleratorPeaks';
import { BearerToken } from './config/BearerToken';
import { DirectAuth } from './config/DirectAuth';
import { DurationInput, NumberInput } from './config/SettingInput';
import { DiscoveryList } from './config/DiscoveryList';
import { EndpointList } from './config/EndpointList';
import { EndpointStatus } from './config/EndpointStatus';

type Props = DataSourcePluginOptionsEditorProps<VllmOptions, VllmSecureOptions>;

/** ROLE_LABEL_EXAMPLE is the role label's placeholder, a label name the same in every language. */
const ROLE_LABEL_EXAMPLE = 'role';

export const MODES: Array<{ label: string; value: Mode; description: string }> = [
  { label: 'Direct', value: MODE.direct, description: 'Scrape vLLM /metrics endpoints and keep history in memory.' },
  {
    label: 'Prometheus',
    value: MODE.prometheus,
    description: 'Query a Prometheus-compatible server that scrapes vLLM.',
  },
];

/**
 * PrometheusConnection is the server's URL, authentication (none, basic auth or the signed-in user's OAuth
 * identity; TLS and custom headers such as a tenant id) and timeouts, with Grafana's current components.
 */
function PrometheusConnection({ options, onOptionsChange }: Props) {
  const onChange = onOptionsChange as (o: typeof options) => void;
  return (
    <>
      <ConnectionSettings config={options} onChange={onChange} urlPlaceholder="http://prometheus:9090" />
      <Auth
        {...convertLegacyAuthProps({ config: options, onChange })}
        visibleMethods={[AuthMethod.NoAuth, AuthMethod.BasicAuth, AuthMethod.OAuthForward]}
      />
      <AdvancedHttpSettings config={options} onChange={onChange} />
    </>
  );
}

/**
 * ConfigEditor configures the data source: direct mode (endpoint list with per-endpoint tests, scrape interval,
 * timeout, retention, limits, credentials and TLS) or Prometheus mode (Grafana's standard HTTP settings plus the
 * server's scrape interval). Secrets go to secureJsonData and show as "configured" once saved.
 */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const jsonData = options.jsonData;
  const mode = jsonData.mode ?? MODE.direct;
  const errors = validateSettings(jsonData);
  const update = (patch: Partial<VllmOptions>) => onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });

  return (
    <>
      <FieldSet label={t('config-editor.vllm-metrics.label', 'vLLM metrics')}>
        <Field
          label={t('config-editor.mode.label', 'Mode')}
          description={localized('config-editor.mode', MODES).find((m) => m.value === mode)?.description}
        >
          <div data-testid={testIds.configEditor.mode}>
            <RadioButtonGroup
              options={localized('config-editor.mode', MODES)}
              value={mode}
              onChange={(v) => update({ mode: v })}
            />
          </div>
        </Field>
        {mode === MODE.direct && (
          <>
            <EndpointList
              uid={options.uid}
              endpoints={jsonData.endpoints ?? []}
              errors={errors.endpoints}
              missing={errors.endpointsMissing}
              onChange={(endpoints) => update({ endpoints })}
            />
            <DiscoveryList
              sources={jsonData.discovery ?? []}
              interval={jsonData.discoveryInterval}
              error={errors.discovery}
              onChange={(discovery) => update({ discovery: discovery.length ? discovery : undefined })}
              onIntervalChange={(discoveryInterval) => update({ discoveryInterval })}
            />
            <Stack direction="row" gap={2} wrap="wrap">
              <DurationInput
                label={t('config-editor.scrape-interval.label', 'Scrape interval')}
                description={t(
                  'config-editor.how-often-each-endpoint-is.description',
                  'How often each endpoint is scraped (min 1s).'
                )}
                placeholder={SETTINGS.defaultScrapeInterval}
                value={jsonData.scrapeInterval}
                error={errors.scrapeInterval}
                testId={testIds.configEditor.scrapeInterval}
                onChange={(scrapeInterval) => update({ scrapeInterval })}
              />
              <DurationInput
                label={t('config-editor.scrape-timeout.label', 'Scrape timeout')}
                description={t(
                  'config-editor.per-scrape-at-most-the.description',
                  'Per scrape, at most the interval. Default 80 % of it.'
                )}
                placeholder={SETTINGS.defaultScrapeTimeout}
                value={jsonData.scrapeTimeout}
                error={errors.scrapeTimeout}
                testId={testIds.configEditor.scrapeTimeout}
                onChange={(scrapeTimeout) => update({ scrapeTimeout })}
              />
              <DurationInput
                label={t('config-editor.retention.label', 'Retention')}
                description={t('config-editor.history-kept-in-memory.description', 'History kept in memory.')}
                placeholder={SETTINGS.defaultRetention}
                value={jsonData.retention}
                error={errors.retention}
                testId={testIds.configEditor.retention}
                onChange={(retention) => update({ retention })}
              />
            </Stack>
            <Stack direction="row" gap={2} wrap="wrap">
              <NumberInput
                label={t('config-editor.memory-cap-mb.label', 'Memory cap (MB)')}
                description={t(
                  'config-editor.for-the-history-oldest-data.description',
                  'For the history; oldest data goes first.'
                )}
                placeholder={String(SETTINGS.defaultMaxMemoryMB)}
                value={jsonData.maxMemoryMB}
                error={errors.maxMemoryMB}
                testId={testIds.configEditor.maxMemoryMB}
                onChange={(maxMemoryMB) => update({ maxMemoryMB })}
              />
              <NumberInput
                label={t('config-editor.max-body-mb.label', 'Max body (MB)')}
                description={t('config-editor.per-scrape-of-one-endpoint.description', 'Per scrape of one endpoint.')}
                placeholder={String(SETTINGS.defaultMaxBodyMB)}
                value={jsonData.maxBodyMB}
                error={errors.limits}
                testId={testIds.configEditor.maxBodyMB}
                onChange={(maxBodyMB) => update({ maxBodyMB })}
              />
              <NumberInput
                label={t('config-editor.max-series.label', 'Max series')}
                description={t(
                  'config-editor.vllm-series-kept-per-scrape.description',
                  'vLLM series kept per scrape of one endpoint.'
                )}
                placeholder={String(SETTINGS.defaultMaxSamples)}
                value={jsonData.maxSamples}
                testId={testIds.configEditor.maxSamples}
                onChange={(maxSamples) => update({ maxSamples })}
              />
            </Stack>
          </>
        )}
        <AcceleratorPeaks jsonData={jsonData} errors={errors} update={update} />
        <Field
          label={t('config-editor.allow-link-local-targets.label', 'Allow link-local targets')}
          description={t(
            'config-editor.let-endpoints-and-the-server.description',
            'Let endpoints and the server URL be link-local or cloud-metadata addresses (169.254.x.x, fe80::). Off unless your inference servers really live there.'
          )}
        >
          <Switch
            data-testid={testIds.configEditor.allowLinkLocalTargets}
            value={Boolean(jsonData.allowLinkLocalTargets)}
            onChange={(e) => update({ allowLinkLocalTargets: e.currentTarget.checked || undefined })}
          />
        </Field>
        {mode === MODE.prometheus && (
          <Field
            label={t('config-editor.http-method.label', 'HTTP method')}
            description={t(
              'config-editor.post-allows-long-queries-some.description',
              'POST allows long queries; some proxies only allow GET.'
            )}
          >
            <div data-testid={testIds.configEditor.httpMethod}>
              <RadioButtonGroup
                options={[
                  // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- HTTP method names
                  { label: 'POST', value: 'POST' },
                  // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- HTTP method names
                  { label: 'GET', value: 'GET' },
                ]}
                value={jsonData.httpMethod ?? 'POST'}
                onChange={(httpMethod) => update({ httpMethod })}
              />
            </div>
          </Field>
        )}
        {mode === MODE.prometheus && (
          <Field
            label={t('config-editor.deny-partial-response.label', 'Refuse partial answers')}
            description={t(
              'config-editor.deny-partial-response.description',
              'When a store behind the server fails (Thanos, VictoriaMetrics cluster), fail the query instead of answering without it. Off, such answers come with a notice naming the store.'
            )}
          >
            <Switch
              data-testid={testIds.configEditor.denyPartialResponse}
              value={Boolean(jsonData.denyPartialResponse)}
              onChange={(e) => update({ denyPartialResponse: e.currentTarget.checked || undefined })}
            />
          </Field>
        )}
        {mode === MODE.prometheus && (
          <Field
            label={t('config-editor.incremental-querying.label', 'Incremental querying')}
            description={t(
              'config-editor.incremental-querying.description',
              'Keep the steps of each range query older than the overlap window between refreshes, and ask the server only for the newer ones. Off when OAuth forwarding is on, whose answers depend on the user.'
            )}
          >
            <Switch
              data-testid={testIds.configEditor.incrementalQuerying}
              value={jsonData.incrementalQuerying !== false}
              onChange={(e) => update({ incrementalQuerying: e.currentTarget.checked ? undefined : false })}
            />
          </Field>
        )}
        {mode === MODE.prometheus && jsonData.incrementalQuerying !== false && (
          <DurationInput
            label={t('config-editor.overlap-window.label', 'Query overlap window')}
            description={t(
              'config-editor.overlap-window.description',
              'How recent a step is asked again at every refresh: longer than samples take to reach the server (remote write, a Thanos sidecar).'
            )}
            placeholder={SETTINGS.defaultOverlapWindow}
            value={jsonData.incrementalQueryOverlapWindow}
            error={errors.overlapWindow}
            testId={testIds.configEditor.overlapWindow}
            onChange={(incrementalQueryOverlapWindow) => update({ incrementalQueryOverlapWindow })}
          />
        )}
        {mode === MODE.prometheus && (
          <Field
            label={t('config-editor.role-label.label', 'Role label')}
            description={t(
              'config-editor.role-label.description',
              "The label your relabel rules put each endpoint's prefill/decode role in (e.g. role, from the pod label llm-d.ai/role). Where series carry it, role detection uses it."
            )}
            invalid={Boolean(errors.roleLabel)}
            error={errors.roleLabel}
          >
            <Input
              aria-label={t('config-editor.role-label.label', 'Role label')}
              value={jsonData.roleLabel ?? ''}
              placeholder={ROLE_LABEL_EXAMPLE}
              width={32}
              onChange={(e) => update({ roleLabel: e.currentTarget.value || undefined })}
            />
          </Field>
        )}
        {mode === MODE.prometheus && (
          <DurationInput
            label={t('config-editor.scrape-interval.label', 'Scrape interval')}
            description={t(
              'config-editor.the-prometheus-server-s-scrape.description',
              "The Prometheus server's scrape interval for vLLM targets; sets the minimum step and rate windows."
            )}
            placeholder={SETTINGS.defaultScrapeInterval}
            value={jsonData.scrapeInterval}
            error={errors.scrapeInterval}
            testId={testIds.configEditor.scrapeInterval}
            onChange={(scrapeInterval) => update({ scrapeInterval })}
          />
        )}
      </FieldSet>
      {mode === MODE.prometheus ? (
        <PrometheusConnection options={options} onOptionsChange={onOptionsChange} />
      ) : (
        <FieldSet label={t('config-editor.authentication-and-tls.label', 'Authentication and TLS')}>
          <DirectAuth options={options} onOptionsChange={onOptionsChange} />
        </FieldSet>
      )}
      <FieldSet label={t('config-editor.bearer-token.label', 'Bearer token')}>
        <BearerToken options={options} onOptionsChange={onOptionsChange} />
      </FieldSet>
      {mode === MODE.direct && options.uid && (
        <FieldSet label={t('config-editor.health.label', 'Health')}>
          <EndpointStatus uid={options.uid} version={options.version} />
        </FieldSet>
      )}
    </>
  );
}
