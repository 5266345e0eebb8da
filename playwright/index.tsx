import React from 'react';
import { beforeMount } from '@playwright/experimental-ct-react/hooks';
import { createTheme } from '@grafana/data';
import { GlobalStyles, ThemeContext } from '@grafana/ui';
import { HooksConfig, installBackend } from '../src/ct/backend';

// Grafana's Icon fetches its SVGs from <public path>build/img/icons/; playwright-ct.config.ts serves them at /.
(window as unknown as { __grafana_public_path__: string }).__grafana_public_path__ = '/';

// Every component test mounts into Grafana's theme and global styles, with the backend faked at getBackendSrv.
beforeMount<HooksConfig>(async ({ App, hooksConfig }) => {
  installBackend(hooksConfig);
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
