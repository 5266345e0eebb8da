import type { Configuration } from 'webpack';
import CopyWebpackPlugin from 'copy-webpack-plugin';
import { merge } from 'webpack-merge';
import grafanaConfig, { type Env } from './.config/webpack/webpack.config';

// Extends the scaffolded build (never edit .config/): the stock copy patterns only take JSON from src/ and the
// root plugin's logos, so the nested data source's logo and the top-level dashboards/ need their own patterns.
const config = async (env: Env): Promise<Configuration> => {
  const baseConfig = await grafanaConfig(env);
  return merge(baseConfig, {
    plugins: [
      new CopyWebpackPlugin({
        patterns: [
          { from: 'datasource/img', to: 'datasource/img' },
          { from: '../dashboards', to: 'dashboards' },
        ],
      }),
    ],
  });
};

export default config;
