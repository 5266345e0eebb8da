import { DataSourcePlugin } from '@grafana/data';
import { DataSource } from './datasource';
import { ConfigEditor } from './components/ConfigEditor';
import { QueryEditor } from './components/QueryEditor';
import { VllmOptions, VllmQuery } from './types';
import { initTranslations } from '../i18n';
import pluginJson from './plugin.json';

import zhHans from './locales/zh-Hans/inferscope-vllm-datasource.json';

// The data source's strings in the user's language (src/datasource/locales, bundled: they are small), before any
// editor renders.
await initTranslations(pluginJson.id, { 'zh-Hans': zhHans });

export const plugin = new DataSourcePlugin<DataSource, VllmQuery, VllmOptions>(DataSource)
  .setConfigEditor(ConfigEditor)
  .setQueryEditor(QueryEditor);
