import { t } from '@grafana/i18n';

/** Option is a picker option with the English label and description its definition carries. */
interface Option {
  value: string;
  label: string;
  description?: string;
}

/**
 * localized translates a list of options at render time: `${prefix}.${value}.label` and `.description`, the
 * English text being the fallback. The option lists (query types and measures from the catalog, groupings, variable
 * resources) are defined once in English; the locale files hold their translations under these keys, which
 * locales.test.ts derives from the same lists.
 */
export function localized<T extends Option>(prefix: string, options: T[]): T[] {
  return options.map((o) => ({
    ...o,
    label: t(`${prefix}.${o.value || 'default'}.label`, o.label),
    ...(o.description === undefined
      ? {}
      : { description: t(`${prefix}.${o.value || 'default'}.description`, o.description) }),
  }));
}
