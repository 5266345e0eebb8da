import { useEffect, useState } from 'react';
import { t } from '@grafana/i18n';
import type { DataSource } from '../datasource';
import { VariableResource } from '../types';

/** ResourceState is a list resource being loaded: its values, whether it is loading, and why it failed. */
export interface ResourceState {
  values: string[];
  loading: boolean;
  error?: string;
}

/** errorMessage extracts a readable message from a backend or fetch error. */
export function errorMessage(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { data?: { error?: string; message?: string }; message?: string; statusText?: string };
    return (
      e.data?.error ?? e.data?.message ?? e.message ?? e.statusText ?? t('errors.request-failed', 'request failed')
    );
  }
  return String(err);
}

type Loaded = { key: string; values: string[]; error?: string };

/**
 * useResource loads one of the data source's list resources (models, engines, endpoints, metrics, label values)
 * for a picker; `skip` leaves it unloaded, e.g. while no label is chosen.
 */
export function useResource(
  datasource: DataSource,
  resource: VariableResource,
  label?: string,
  skip = false
): ResourceState {
  const key = skip ? '' : `${resource}\u0000${label ?? ''}`;
  const [loaded, setLoaded] = useState<Loaded>({ key: '', values: [] });
  useEffect(() => {
    if (!key) {
      return;
    }
    let cancelled = false;
    datasource
      .listResource(resource, label)
      .then((values) => !cancelled && setLoaded({ key, values }))
      .catch((err: unknown) => !cancelled && setLoaded({ key, values: [], error: errorMessage(err) }));
    return () => {
      cancelled = true;
    };
  }, [datasource, key, resource, label]);
  if (!key) {
    return { values: [], loading: false };
  }
  if (loaded.key !== key) {
    return { values: [], loading: true };
  }
  return { values: loaded.values, loading: false, error: loaded.error };
}
