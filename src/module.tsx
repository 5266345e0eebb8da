import React, { Suspense, lazy } from 'react';
import { AppPlugin, type AppRootProps } from '@grafana/data';
import { t } from '@grafana/i18n';
import { LoadingPlaceholder } from '@grafana/ui';
import type { AppConfigProps, AppSettings } from './components/AppConfig/AppConfig';
import { initTranslations } from './i18n';
import pluginJson from './plugin.json';

import zhHans from './locales/zh-Hans/inferscope-vllm-app.json';

// The app's strings in the user's language (src/locales, bundled: they are small), before any page renders.
await initTranslations(pluginJson.id, { 'zh-Hans': zhHans });

const LazyApp = lazy(() => import('./components/App/App'));
const LazyAppConfig = lazy(() => import('./components/AppConfig/AppConfig'));

const App = (props: AppRootProps) => (
  <Suspense fallback={<LoadingPlaceholder text="" />}>
    <LazyApp {...props} />
  </Suspense>
);

const AppConfig = (props: AppConfigProps) => (
  <Suspense fallback={<LoadingPlaceholder text="" />}>
    <LazyAppConfig {...props} />
  </Suspense>
);

export const plugin = new AppPlugin<AppSettings>().setRootPage(App).addConfigPage({
  // The tab's title is read once, here: the translations are loaded by the await above.
  // eslint-disable-next-line @grafana/i18n/no-translation-top-level
  title: t('app.config-page.title', 'Configuration'),
  icon: 'cog',
  body: AppConfig,
  id: 'configuration',
});
