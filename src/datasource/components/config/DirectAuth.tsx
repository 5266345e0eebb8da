import React from 'react';
import { t } from '@grafana/i18n';
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
      <InlineField
        label={t('direct-auth.basic-auth.label', 'Basic auth')}
        labelWidth={24}
        tooltip={t('direct-auth.send-a-user-and-password.tooltip', 'Send a user and password with every scrape.')}
      >
        <InlineSwitch
          aria-label={t('direct-auth.basic-auth.aria', 'Basic auth')}
          value={options.basicAuth ?? false}
          onChange={(ev) => onOptionsChange({ ...options, basicAuth: ev.currentTarget.checked })}
        />
      </InlineField>
      {options.basicAuth && (
        <Stack direction="row" gap={1}>
          <Field label={t('direct-auth.user.label', 'User')}>
            <Input
              aria-label={t('direct-auth.basic-auth-user.aria', 'Basic auth user')}
              value={options.basicAuthUser ?? ''}
              width={24}
              onChange={(ev) => onOptionsChange({ ...options, basicAuthUser: ev.currentTarget.value })}
            />
          </Field>
          <Field label={t('direct-auth.password.label', 'Password')}>
            <SecretInput
              aria-label={t('direct-auth.basic-auth-password.aria', 'Basic auth password')}
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
      <InlineField
        label={t('direct-auth.skip-tls-verify.label', 'Skip TLS verify')}
        labelWidth={24}
        tooltip={t(
          'direct-auth.accept-any-certificate-self-signed.tooltip',
          'Accept any certificate (self-signed endpoints).'
        )}
      >
        <InlineSwitch
          aria-label={t('direct-auth.skip-tls-verify.aria', 'Skip TLS verify')}
          value={jsonData.tlsSkipVerify ?? false}
          onChange={(ev) => setJson({ tlsSkipVerify: ev.currentTarget.checked })}
        />
      </InlineField>
      <InlineField
        label={t('direct-auth.tls-client-auth.label', 'TLS client auth')}
        labelWidth={24}
        tooltip={t('direct-auth.present-a-client-certificate.tooltip', 'Present a client certificate.')}
      >
        <InlineSwitch
          aria-label={t('direct-auth.tls-client-auth.aria', 'TLS client auth')}
          value={jsonData.tlsAuth ?? false}
          onChange={(ev) => setJson({ tlsAuth: ev.currentTarget.checked })}
        />
      </InlineField>
      <InlineField
        label={t('direct-auth.with-ca-cert.label', 'With CA cert')}
        labelWidth={24}
        tooltip={t('direct-auth.verify-endpoints-against-your-own.tooltip', 'Verify endpoints against your own CA.')}
      >
        <InlineSwitch
          aria-label={t('direct-auth.with-ca-cert.aria', 'With CA cert')}
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
