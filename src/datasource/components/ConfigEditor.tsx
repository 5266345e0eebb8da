import React from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { AdvancedHttpSettings, Auth, AuthMethod, ConnectionSettings, convertLegacyAuthProps } from '@grafana/plugin-ui';
import { Field, FieldSet, RadioButtonGroup, Stack, Switch } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import { Mode, VllmOptions, VllmSecureOptions } from '../types';
import { validateSettings } from '../validation';
import { BearerToken } from './config/BearerToken';
import { DirectAuth } from './config/DirectAuth';
import { DurationInput, NumberInput } from './config/SettingInput';
import { EndpointList } from './config/EndpointList';
import { EndpointStatus } from './config/EndpointStatus';

type Props = DataSourcePluginOptionsEditorProps<VllmOptions, VllmSecureOptions>;

const MODES: Array<{ label: string; value: Mode; description: string }> = [
  { label: 'Direct', value: 'direct', description: 'Scrape vLLM /metrics endpoints and keep history in memory.' },
  { label: 'Prometheus', value: 'prometheus', description: 'Query a Prometheus-compatible server that scrapes vLLM.' },
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
  const mode = jsonData.mode ?? 'direct';
  const errors = validateSettings(jsonData);
  const update = (patch: Partial<VllmOptions>) => onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });

  return (
    <>
      <FieldSet label="vLLM metrics">
        <Field label="Mode" description={MODES.find((m) => m.value === mode)?.description}>
          <div data-testid={testIds.configEditor.mode}>
            <RadioButtonGroup options={MODES} value={mode} onChange={(v) => update({ mode: v })} />
          </div>
        </Field>
        {mode === 'direct' && (
          <>
            <EndpointList
              uid={options.uid}
              endpoints={jsonData.endpoints ?? []}
              errors={errors.endpoints}
              missing={errors.endpointsMissing}
              onChange={(endpoints) => update({ endpoints })}
            />
            <Stack direction="row" gap={2} wrap="wrap">
              <DurationInput
                label="Scrape interval"
                description="How often each endpoint is scraped (min 1s)."
                placeholder="5s"
                value={jsonData.scrapeInterval}
                error={errors.scrapeInterval}
                testId={testIds.configEditor.scrapeInterval}
                onChange={(scrapeInterval) => update({ scrapeInterval })}
              />
              <DurationInput
                label="Scrape timeout"
                description="Per scrape, at most the interval. Default 80 % of it."
                placeholder="4s"
                value={jsonData.scrapeTimeout}
                error={errors.scrapeTimeout}
                testId={testIds.configEditor.scrapeTimeout}
                onChange={(scrapeTimeout) => update({ scrapeTimeout })}
              />
              <DurationInput
                label="Retention"
                description="History kept in memory."
                placeholder="1h"
                value={jsonData.retention}
                error={errors.retention}
                testId={testIds.configEditor.retention}
                onChange={(retention) => update({ retention })}
              />
            </Stack>
            <Stack direction="row" gap={2} wrap="wrap">
              <NumberInput
                label="Memory cap (MB)"
                description="For the history; oldest data goes first."
                placeholder="512"
                value={jsonData.maxMemoryMB}
                error={errors.maxMemoryMB}
                testId={testIds.configEditor.maxMemoryMB}
                onChange={(maxMemoryMB) => update({ maxMemoryMB })}
              />
              <NumberInput
                label="Max body (MB)"
                description="Per scrape of one endpoint."
                placeholder="16"
                value={jsonData.maxBodyMB}
                error={errors.limits}
                testId={testIds.configEditor.maxBodyMB}
                onChange={(maxBodyMB) => update({ maxBodyMB })}
              />
              <NumberInput
                label="Max series"
                description="vLLM series kept per scrape of one endpoint."
                placeholder="50000"
                value={jsonData.maxSamples}
                testId={testIds.configEditor.maxSamples}
                onChange={(maxSamples) => update({ maxSamples })}
              />
            </Stack>
          </>
        )}
        <Field
          label="Allow link-local targets"
          description="Let endpoints and the server URL be link-local or cloud-metadata addresses (169.254.x.x, fe80::). Off unless your inference servers really live there."
        >
          <Switch
            data-testid={testIds.configEditor.allowLinkLocalTargets}
            value={Boolean(jsonData.allowLinkLocalTargets)}
            onChange={(e) => update({ allowLinkLocalTargets: e.currentTarget.checked || undefined })}
          />
        </Field>
        {mode === 'prometheus' && (
          <Field label="HTTP method" description="POST allows long queries; some proxies only allow GET.">
            <div data-testid={testIds.configEditor.httpMethod}>
              <RadioButtonGroup
                options={[
                  { label: 'POST', value: 'POST' },
                  { label: 'GET', value: 'GET' },
                ]}
                value={jsonData.httpMethod ?? 'POST'}
                onChange={(httpMethod) => update({ httpMethod })}
              />
            </div>
          </Field>
        )}
        {mode === 'prometheus' && (
          <DurationInput
            label="Scrape interval"
            description="The Prometheus server's scrape interval for vLLM targets; sets the minimum step and rate windows."
            placeholder="15s"
            value={jsonData.scrapeInterval}
            error={errors.scrapeInterval}
            testId={testIds.configEditor.scrapeInterval}
            onChange={(scrapeInterval) => update({ scrapeInterval })}
          />
        )}
      </FieldSet>
      {mode === 'prometheus' ? (
        <PrometheusConnection options={options} onOptionsChange={onOptionsChange} />
      ) : (
        <FieldSet label="Authentication and TLS">
          <DirectAuth options={options} onOptionsChange={onOptionsChange} />
        </FieldSet>
      )}
      <FieldSet label="Bearer token">
        <BearerToken options={options} onOptionsChange={onOptionsChange} />
      </FieldSet>
      {mode === 'direct' && options.uid && (
        <FieldSet label="Health">
          <EndpointStatus uid={options.uid} version={options.version} />
        </FieldSet>
      )}
    </>
  );
}
