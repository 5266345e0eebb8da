import { initPluginTranslations, t, type Resources } from '@grafana/i18n';

/**
 * tf is t with values: the translated text's {{name}} placeholders replaced by values as they are. i18next would
 * HTML-escape them ("/" in a URL becomes "&#x2F;"), which React, escaping text itself, would then show.
 */
export function tf(key: string, text: string, values: Record<string, string | number | undefined>): string {
  const s = t(key, text, { skipInterpolation: true } as never);
  return s.replace(/\{\{\s*(\w+)\s*\}\}/g, (m, k: string) => (values[k] === undefined ? m : String(values[k])));
}

/**
 * initTranslations gives a plugin its strings in the user's language from the locale files it bundles; English (the
 * default, in the source) and languages without a file keep the source text.
 */
export async function initTranslations(pluginId: string, locales: Record<string, Resources>) {
  await initPluginTranslations(pluginId, [async (language) => locales[language] ?? {}]);
}

/** LANGUAGES are the locales the plugins ship besides the English in the source; locales.test.ts checks each. */
export const LANGUAGES = ['zh-Hans'];
