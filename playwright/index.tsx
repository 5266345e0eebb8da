import React from 'react';
import { beforeMount } from '@playwright/experimental-ct-react/hooks';
import { createTheme } from '@grafana/data';
import { GlobalStyles, ThemeContext } from '@grafana/ui';
import i18next from 'i18next';
import { initPluginTranslations } from '@grafana/i18n';
import { HooksConfig, installBackend } from '../src/ct/backend';
import { installScenes } from '../src/ct/scenes';
import appZh from '../src/locales/zh-Hans/inferscope-vllm-app.json';
import datasourceZh from '../src/datasource/locales/zh-Hans/inferscope-vllm-datasource.json';

// Grafana's Icon fetches its SVGs from <public path>build/img/icons/; playwright-ct.config.ts serves them at /.
(window as unknown as { __grafana_public_path__: string }).__grafana_public_path__ = '/';

// Every component test mounts into Grafana's theme and global styles, with the backend faked at getBackendSrv.
beforeMount<HooksConfig>(async ({ App, hooksConfig }) => {
  installBackend(hooksConfig);
  if (hooksConfig?.fleet) {
    // The app's Scenes pages: Grafana's data-source service, runRequest and panel plugins, over the fake backend.
    installScenes();
  }
  // The locale files as Grafana would load them for a user whose language is set (en-US needs none).
  const language = hooksConfig?.language ?? 'en-US';
  await initPluginTranslations(hooksConfig?.plugin ?? 'inferscope-vllm-datasource');
  i18next.addResourceBundle('zh-Hans', 'inferscope-vllm-app', appZh, true, true);
  i18next.addResourceBundle('zh-Hans', 'inferscope-vllm-datasource', datasourceZh, true, true);
  await i18next.changeLanguage(language);
  const theme = createTheme({ colors: { mode: hooksConfig?.theme ?? 'dark' } });
  document.body.style.background = theme.colors.background.primary;
  return (
    <ThemeContext.Provider value={theme}>
      <GlobalStyles />
      <div style={{ padding: 16, background: theme.colors.background.primary, minHeight: '100vh' }}>
        <App />
      </div>
    </ThemeContext.Provider>
  );
});
