import fs from 'fs';
import path from 'path';
import { defineConfig, devices } from '@playwright/experimental-ct-react';

// Grafana's icons are SVG files its Icon component fetches at run time from <public path>build/img/icons/ (a Grafana
// server serves them); the component tests serve the copies @grafana/ui ships.
const iconDir = path.join(__dirname, 'node_modules/@grafana/ui/dist/public/img/icons');

function grafanaIcons() {
  return {
    name: 'grafana-icons',
    generateBundle(this: { emitFile: (f: { type: 'asset'; fileName: string; source: Buffer }) => void }) {
      const walk = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
      for (const file of walk(iconDir)) {
        this.emitFile({ type: 'asset', fileName: 'build/img/icons/' + path.relative(iconDir, file), source: fs.readFileSync(file) });
      }
    },
  };
}

/**
 * Component tests in a real browser (Debian's chromium; CHROMIUM_PATH overrides): the editors and app pages with
 * Grafana's real @grafana/ui components and theme, the backend faked at getBackendSrv (playwright/index.tsx).
 */
export default defineConfig({
  testDir: './src',
  testMatch: '**/*.ct.tsx',
  timeout: 30_000,
  fullyParallel: false,
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  reporter: [['list']],
  use: {
    ...devices['Desktop Chrome'],
    viewport: { width: 1280, height: 900 },
    ctPort: 3100,
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] },
    trace: 'off',
    ctViteConfig: {
      plugins: [grafanaIcons()],
      build: {
        rollupOptions: {
          // @grafana/plugin-compat probes for @grafana/runtime exports newer Grafanas add; missing ones are undefined.
          shimMissingExports: true,
          onwarn(warning, warn) {
            if (warning.code !== 'SHIMMED_EXPORT') {
              warn(warning);
            }
          },
        },
        chunkSizeWarningLimit: 20_000,
      },
    },
  },
});
