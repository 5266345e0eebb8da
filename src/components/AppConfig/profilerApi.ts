import { useState } from 'react';
import { lastValueFrom } from 'rxjs';
import { config, getBackendSrv } from '@grafana/runtime';
import { PLUGIN_ID } from '../../constants';
import { errorMessage } from '../useBackendStatus';

/** ProfilerConfigSetting is one allow-listed ms_service_profiler_config.json in the app's jsonData. */
export interface ProfilerConfigSetting {
  name: string;
  path: string;
  metricsUrl?: string;
  /** overwriteReadOnly lets the switch replace the file when it has no write permission bit. */
  overwriteReadOnly?: boolean;
}

/** ProfilerConfigState is one file as the backend reads it now (GET profiler-configs). */
export interface ProfilerConfigState {
  name: string;
  path: string;
  metricsUrl?: string;
  exists: boolean;
  metricEnable: 0 | 1;
  enable: 0 | 1;
  modified?: string;
  problem?: string;
  error?: string;
  exposed: boolean | null;
  profilingFamilies?: number;
  exposedError?: string;
}

/** ProfilerConfigList is the backend's answer to GET profiler-configs. */
export interface ProfilerConfigList {
  profilerConfigs: ProfilerConfigState[];
  canWrite: boolean;
  allowEditorsToWrite: boolean;
}

const resources = `/api/plugins/${PLUGIN_ID}/resources`;

/** listProfilerConfigs fetches every allow-listed file's state, with /metrics exposure. */
export async function listProfilerConfigs(): Promise<ProfilerConfigList> {
  const res = await lastValueFrom(
    getBackendSrv().fetch<ProfilerConfigList>({ url: `${resources}/profiler-configs`, showErrorAlert: false })
  );
  return res.data;
}

/** setMetricEnable writes metric_enable through the backend and returns the file's new state. */
export async function setMetricEnable(name: string, value: 0 | 1): Promise<ProfilerConfigState> {
  const res = await lastValueFrom(
    getBackendSrv().fetch<ProfilerConfigState>({
      url: `${resources}/profiler-configs/${encodeURIComponent(name)}/metric-enable`,
      method: 'PUT',
      data: { value },
      showErrorAlert: false,
    })
  );
  return res.data;
}

/**
 * saveAppSettings stores the app's jsonData and, when given, secure fields (written, never read back); the backend
 * rebuilds its instance from them.
 */
export async function saveAppSettings(
  enabled: boolean,
  pinned: boolean,
  jsonData: object,
  secureJsonData?: Record<string, string>
): Promise<void> {
  await getBackendSrv().post(
    `/api/plugins/${PLUGIN_ID}/settings`,
    secureJsonData ? { enabled, pinned, jsonData, secureJsonData } : { enabled, pinned, jsonData },
    { showErrorAlert: false }
  );
}

/**
 * useSaveSettings saves the app's settings for an editor of them: saving is true while the request is out,
 * saveError holds why the last save failed, and onSaved gets what was stored.
 */
export function useSaveSettings<T extends object>(enabled: boolean, pinned: boolean, onSaved: (s: T) => void) {
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState('');
  const save = async (next: T, secureJsonData?: Record<string, string>) => {
    setSaving(true);
    setSaveError('');
    try {
      await saveAppSettings(enabled, pinned, next, secureJsonData);
      onSaved(next);
    } catch (err: unknown) {
      setSaveError(errorMessage(err));
    } finally {
      setSaving(false);
    }
  };
  return { saving, saveError, save };
}

/** orgRole is the signed-in user's role in the current org; the backend checks it again on every write. */
export function orgRole(): string {
  return config.bootData?.user?.orgRole ?? '';
}
