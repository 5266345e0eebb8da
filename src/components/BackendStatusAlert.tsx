import React from 'react';
import { t } from '@grafana/i18n';
import { Alert, LoadingPlaceholder } from '@grafana/ui';
import { testIds } from './testIds';
import { useBackendStatus } from './useBackendStatus';

/** Shows whether the app backend answers, and which version. */
export function BackendStatusAlert() {
  const backend = useBackendStatus();
  return (
    <div data-testid={testIds.overview.backendStatus}>
      {backend.state === 'loading' && (
        <LoadingPlaceholder
          text={t('backend-status-alert.contacting-the-inferscope-backend.text', 'Contacting the InferScope backend…')}
        />
      )}
      {backend.state === 'ok' && (
        <Alert severity="success" title={t('backend-status-alert.backend-running.title', 'Backend running')}>
          InferScope app backend version {backend.status.version} is answering.
        </Alert>
      )}
      {backend.state === 'error' && (
        <Alert severity="error" title={t('backend-status-alert.backend-not-reachable.title', 'Backend not reachable')}>
          The InferScope app backend did not answer: {backend.message}. Check that the plugin&apos;s executables are
          installed and that the app is enabled.
        </Alert>
      )}
    </div>
  );
}
