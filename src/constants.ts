import pluginJson from './plugin.json';

export const PLUGIN_ID = pluginJson.id;
export const PLUGIN_BASE_URL = `/a/${pluginJson.id}`;
export const DATASOURCE_TYPE = 'inferscope-vllm-datasource';

/** Dashboards the app ships (see plugin.json includes); uid → title. */
export const DASHBOARDS = pluginJson.includes
  .filter((i): i is typeof i & { uid: string } => i.type === 'dashboard' && 'uid' in i)
  .map((i) => ({ uid: i.uid, title: i.name }));
