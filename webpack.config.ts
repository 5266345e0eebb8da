import type { Configuration } from 'webpack';
import CopyWebpackPlugin from 'copy-webpack-plugin';
import { merge } from 'webpack-merge';
import grafanaConfig, { type Env } from './.config/webpack/webpack.config';

// Extends the scaffolded build (never edit .config/): the stock copy patterns only take JSON from src/ and the
// root plugin's logos, so the nested data source's logo, the top-level dashboards/ and the provisioning examples need
// their own patterns.
const config = async (env: Env): Promise<Configuration> => {
  const baseConfig = await grafanaConfig(env);
  return merge(baseConfig, {
    plugins: [
      new CopyWebpackPlugin({
        patterns: [
          { from: 'datasource/img', to: 'datasource/img' },
          { from: '../dashboards', to: 'dashboards' },
          // Provisioning examples the catalog README (src/README.md) points at inside the archive.
          { from: '../provisioning/alerting/inferscope-rules.yaml', to: 'provisioning/alerting/' },
          { from: '../provisioning/datasources/datasources.yaml', to: 'provisioning/datasources/' },
        ],
      }),
    ],
  });
};

export default config;
