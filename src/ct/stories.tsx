import React, { useMemo, useState } from 'react';
import { locationService } from '@grafana/runtime';
import { MemoryRouter } from 'react-router-dom';
import { AppRootProps, DataSourceInstanceSettings, DataSourceSettings, PluginType } from '@grafana/data';
import App from '../components/App/App';
import { LocationRouter } from './scenes';
import AppConfig, { AppSettings } from '../components/AppConfig/AppConfig';
import { Overview } from '../pages/Overview';
import { DataSource } from '../datasource/datasource';
import { ConfigEditor } from '../datasource/components/ConfigEditor';
import { QueryEditor } from '../datasource/components/QueryEditor';
import { VariableQueryEditor } from '../datasource/components/VariableQueryEditor';
import { Mode, VariableQuery, VllmOptions, VllmQuery, VllmSecureOptions } from '../datasource/types';

// Stories are the editors as Grafana hosts them, for the component tests (*.ct.tsx): each keeps the state Grafana
// would keep (the query, the settings) and shows it as JSON, so a test asserts what the user's edits produce.

/** dataSource is the real DataSource class; its resource calls go to getBackendSrv, which the tests fake. */
function dataSource(mode: Mode): DataSource {
  return new DataSource({
    id: 1,
    uid: 'vllm',
    type: 'inferscope-vllm-datasource',
    name: 'vLLM',
    meta: { id: 'inferscope-vllm-datasource' },
    jsonData: { mode },
  } as unknown as DataSourceInstanceSettings<VllmOptions>);
}

/** State shows a story's state for the test to read. */
function State({ value }: { value: unknown }) {
  return (
    <pre data-testid="ct-state" style={{ display: 'none' }}>
      {JSON.stringify(value)}
    </pre>
  );
}

export function QueryEditorStory({ initial, mode = 'direct' }: { initial: Partial<VllmQuery>; mode?: Mode }) {
  const ds = useMemo(() => dataSource(mode), [mode]);
  const [query, setQuery] = useState<VllmQuery>({ refId: 'A', ...initial });
  const [runs, setRuns] = useState(0);
  return (
    <>
      <QueryEditor query={query} datasource={ds} onChange={setQuery} onRunQuery={() => setRuns((n) => n + 1)} />
      <State value={{ query, runs }} />
    </>
  );
}

export function VariableEditorStory({ initial }: { initial?: VariableQuery }) {
  const ds = useMemo(() => dataSource('direct'), []);
  const [query, setQuery] = useState<VariableQuery>(
    initial ?? ({ refId: 'V', queryType: 'variable', resource: 'models' } as VariableQuery)
  );
  return (
    <>
      <VariableQueryEditor
        query={query}
        datasource={ds}
        onChange={(q) => setQuery(q as VariableQuery)}
        onRunQuery={() => {}}
      />
      <State value={query} />
    </>
  );
}

type Settings = DataSourceSettings<VllmOptions, VllmSecureOptions>;

export function ConfigEditorStory({ jsonData, saved = false }: { jsonData: VllmOptions; saved?: boolean }) {
  const [options, setOptions] = useState<Settings>({
    id: 1,
    uid: saved ? 'vllm' : '',
    orgId: 1,
    name: 'vLLM',
    type: 'inferscope-vllm-datasource',
    typeName: 'InferScope for vLLM',
    typeLogoUrl: '',
    access: 'proxy',
    url: jsonData.mode === 'prometheus' ? 'http://prometheus:9090' : '',
    user: '',
    database: '',
    basicAuth: false,
    basicAuthUser: '',
    isDefault: false,
    jsonData,
    secureJsonFields: {},
    readOnly: false,
    withCredentials: false,
    version: 1,
  });
  return (
    <>
      <ConfigEditor options={options} onOptionsChange={setOptions} />
      <State value={options} />
    </>
  );
}

export function AppConfigStory({ enabled = true, jsonData = {} }: { enabled?: boolean; jsonData?: AppSettings }) {
  const plugin = {
    meta: {
      id: 'inferscope-vllm-app',
      name: 'InferScope for vLLM',
      type: PluginType.app,
      enabled,
      pinned: true,
      jsonData,
    },
  };
  return <AppConfig plugin={plugin as never} query={{} as never} />;
}

export function OverviewStory() {
  return (
    <MemoryRouter>
      <Overview />
    </MemoryRouter>
  );
}

/** AppStory is the app's root page as Grafana mounts it, opened at path (with its query string). */
export function AppStory({ path }: { path: string }) {
  // The URL is set before the first render, as when Grafana opens a link.
  useState(() => locationService.push(path));
  return (
    <LocationRouter>
      <App
        {...({ basename: 'a/inferscope-vllm-app', meta: { id: 'inferscope-vllm-app' } } as unknown as AppRootProps)}
      />
    </LocationRouter>
  );
}
