import React from 'react';
import { t } from '@grafana/i18n';
import { DataSourceSettings } from '@grafana/data';
import { Field, SecretInput } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { VllmOptions, VllmSecureOptions } from '../../types';

type Options = DataSourceSettings<VllmOptions, VllmSecureOptions>;

/** BearerToken edits the secure bearer token; once saved it only shows as "configured" and can be reset. */
export function BearerToken({ options, onOptionsChange }: { options: Options; onOptionsChange: (o: Options) => void }) {
  return (
    <Field
      label={t('bearer-token.bearer-token.label', 'Bearer token')}
      description={t(
        'bearer-token.sent-as-authorization-bearer-token.description',
        'Sent as Authorization: Bearer <token>. Stored encrypted; never shown again.'
      )}
    >
      <SecretInput
        aria-label={t('bearer-token.bearer-token.aria', 'Bearer token')}
        data-testid={testIds.configEditor.bearerToken}
        isConfigured={Boolean(options.secureJsonFields?.bearerToken)}
        value={options.secureJsonData?.bearerToken ?? ''}
        placeholder={t('bearer-token.placeholder', 'token')}
        width={48}
        onChange={(ev) =>
          onOptionsChange({
            ...options,
            secureJsonData: { ...options.secureJsonData, bearerToken: ev.currentTarget.value },
          })
        }
        onReset={() =>
          onOptionsChange({
            ...options,
            secureJsonFields: { ...options.secureJsonFields, bearerToken: false },
            secureJsonData: { ...options.secureJsonData, bearerToken: '' },
          })
        }
      />
    </Field>
  );
}
