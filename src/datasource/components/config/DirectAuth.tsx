import React from 'react';
import { DataSourceSettings } from '@grafana/data';
import { Field, Input, InlineField, InlineSwitch, SecretInput, Stack, TLSAuthSettings } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { VllmOptions, VllmSecureOptions } from '../../types';

type Options = DataSourceSettings<VllmOptions, VllmSecureOptions>;

interface Props {
  options: Options;
  onOptionsChange: (options: Options) => void;
}

/** DirectAuth edits the credentials and TLS options direct mode sends to every endpoint (Grafana's standard fields). */
export function DirectAuth({ options, onOptionsChange }: Props) {
  const jsonData = options.jsonData as VllmOptions & {
    tlsSkipVerify?: boolean;
    tlsAuth?: boolean;
    tlsAuthWithCACert?: boolean;
  };
  const setJson = (patch: Record<string, unknown>) =>
    onOptionsChange({ ...options, jsonData: { ...options.jsonData, ...patch } });
  const configured = options.secureJsonFields ?? {};
  return (
    <Stack direction="column" gap={0}>
      <InlineField label="Basic auth" labelWidth={24} tooltip="Send a user and password with every scrape.">
        <InlineSwitch
          aria-label="Basic auth"
          value={options.basicAuth ?? false}
          onChange={(ev) => onOptionsChange({ ...options, basicAuth: ev.currentTarget.checked })}
        />
      </InlineField>
      {options.basicAuth && (
        <Stack direction="row" gap={1}>
          <Field label="User">
            <Input
              aria-label="Basic auth user"
              value={options.basicAuthUser ?? ''}
              width={24}
              onChange={(ev) => onOptionsChange({ ...options, basicAuthUser: ev.currentTarget.value })}
            />
          </Field>
          <Field label="Password">
            <SecretInput
              aria-label="Basic auth password"
              data-testid={testIds.configEditor.basicAuthPassword}
              isConfigured={Boolean(configured.basicAuthPassword)}
              value={options.secureJsonData?.basicAuthPassword ?? ''}
              width={24}
              onChange={(ev) =>
                onOptionsChange({
                  ...options,
                  secureJsonData: { ...options.secureJsonData, basicAuthPassword: ev.currentTarget.value },
                })
              }
              onReset={() =>
                onOptionsChange({
                  ...options,
                  secureJsonFields: { ...configured, basicAuthPassword: false },
                  secureJsonData: { ...options.secureJsonData, basicAuthPassword: '' },
                })
              }
            />
          </Field>
        </Stack>
      )}
      <InlineField label="Skip TLS verify" labelWidth={24} tooltip="Accept any certificate (self-signed endpoints).">
        <InlineSwitch
          aria-label="Skip TLS verify"
          value={jsonData.tlsSkipVerify ?? false}
          onChange={(ev) => setJson({ tlsSkipVerify: ev.currentTarget.checked })}
        />
      </InlineField>
      <InlineField label="TLS client auth" labelWidth={24} tooltip="Present a client certificate.">
        <InlineSwitch
          aria-label="TLS client auth"
          value={jsonData.tlsAuth ?? false}
          onChange={(ev) => setJson({ tlsAuth: ev.currentTarget.checked })}
        />
      </InlineField>
      <InlineField label="With CA cert" labelWidth={24} tooltip="Verify endpoints against your own CA.">
        <InlineSwitch
          aria-label="With CA cert"
          value={jsonData.tlsAuthWithCACert ?? false}
          onChange={(ev) => setJson({ tlsAuthWithCACert: ev.currentTarget.checked })}
        />
      </InlineField>
      {(jsonData.tlsAuth || jsonData.tlsAuthWithCACert) && (
        <TLSAuthSettings dataSourceConfig={options} onChange={onOptionsChange} />
      )}
    </Stack>
  );
}
