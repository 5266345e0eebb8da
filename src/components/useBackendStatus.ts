import { useEffect, useState } from 'react';
import { lastValueFrom } from 'rxjs';
import { t } from '@grafana/i18n';
import { getBackendSrv } from '@grafana/runtime';
import { PLUGIN_ID } from '../constants';

export interface BackendStatus {
  pluginId: string;
  version: string;
}

export type BackendState =
  { state: 'loading' } | { state: 'ok'; status: BackendStatus } | { state: 'error'; message: string };

/** Asks the app backend which build is answering, so a missing or stale executable shows up in the UI. */
export function useBackendStatus(): BackendState {
  const [result, setResult] = useState<BackendState>({ state: 'loading' });
  useEffect(() => {
    let cancelled = false;
    lastValueFrom(
      getBackendSrv().fetch<BackendStatus>({
        url: `/api/plugins/${PLUGIN_ID}/resources/status`,
        showErrorAlert: false,
      })
    )
      .then((res) => !cancelled && setResult({ state: 'ok', status: res.data }))
      .catch((err: unknown) => !cancelled && setResult({ state: 'error', message: errorMessage(err) }));
    return () => {
      cancelled = true;
    };
  }, []);
  return result;
}

/** errorMessage pulls the most useful text out of a backendSrv rejection. */
export function errorMessage(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { data?: { error?: string; message?: string }; message?: string; statusText?: string };
    return e.data?.error ?? e.data?.message ?? e.message ?? e.statusText ?? t('errors.unknown', 'unknown error');
  }
  return String(err);
}
