import { t } from '@grafana/i18n';
import { ProfilerConfigSetting } from './profilerApi';

/** NAME_PATTERN mirrors the backend's rule: names are one URL path segment. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** FieldErrors holds a message per field of one allow-list row. */
export interface FieldErrors {
  name?: string;
  path?: string;
  metricsUrl?: string;
}

/** validateAllowList checks rows as the backend will, so the admin sees problems before saving. */
export function validateAllowList(rows: ProfilerConfigSetting[]): FieldErrors[] {
  return rows.map((row, i) => {
    const errors: FieldErrors = {};
    if (!NAME_PATTERN.test(row.name)) {
      errors.name = t(
        'allow-list-editor.errors.name-pattern',
        "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
      );
    } else if (rows.findIndex((r) => r.name === row.name) !== i) {
      errors.name = t('allow-list-editor.errors.name-twice', 'This name is used twice');
    }
    if (!row.path.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(row.path)) {
      errors.path = t(
        'allow-list-editor.errors.path-not-absolute',
        'An absolute path, e.g. /var/lib/inferscope/ascend/ms_service_profiler_config.json'
      );
    }
    if (row.metricsUrl && !/^https?:\/\/[^/]+/.test(row.metricsUrl)) {
      errors.metricsUrl = t(
        'allow-list-editor.errors.metrics-url',
        'An http(s) URL, e.g. http://vllm-ascend:8000/metrics'
      );
    }
    return errors;
  });
}

/** hasErrors reports whether any row has a problem. */
export function hasErrors(errors: FieldErrors[]): boolean {
  return errors.some((e) => Object.keys(e).length > 0);
}
