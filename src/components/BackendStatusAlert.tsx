import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../i18n';
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
          {tf('backend-status-alert.running', 'InferScope app backend version {{version}} is answering.', {
            version: backend.status.version,
          })}
        </Alert>
      )}
      {backend.state === 'error' && (
        <Alert severity="error" title={t('backend-status-alert.backend-not-reachable.title', 'Backend not reachable')}>
          {tf(
            'backend-status-alert.failed',
            "The InferScope app backend did not answer: {{error}}. Check that the plugin's executables are installed and that the app is enabled.",
            { error: backend.message }
          )}
        </Alert>
      )}
    </div>
  );
}
