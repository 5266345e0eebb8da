import React from 'react';
import { locationUtil, urlUtil } from '@grafana/data';
import { t } from '@grafana/i18n';
import { getDataSourceSrv, locationService } from '@grafana/runtime';
import {
  DataSourceVariable,
  PanelBuilders,
  SceneComponentProps,
  SceneControlsSpacer,
  SceneObjectBase,
  SceneQueryRunner,
  SceneRefreshPicker,
  SceneTimePicker,
  SceneTimeRange,
  SceneVariableSet,
  VariableValueSelectors,
  VizPanel,
  sceneGraph,
  type SceneObject,
} from '@grafana/scenes';
import { LinkButton } from '@grafana/ui';
import { DATASOURCE_TYPE, PLUGIN_BASE_URL } from '../../constants';
import type { DataSource } from '../../datasource/datasource';
import type { EndpointStatus } from '../../datasource/types';
import { DS_REF, DS_VARIABLE, type PanelSpec } from './queries';

/** URL_KEYS are the query parameters every page keeps when linking to another: data source, time range, refresh. */
export const URL_KEYS = [`var-${DS_VARIABLE}`, 'from', 'to', 'refresh'];

/** ROUTES are the pages' paths under the app. */
export const ROUTES = {
  fleet: PLUGIN_BASE_URL,
  models: `${PLUGIN_BASE_URL}/models`,
  about: `${PLUGIN_BASE_URL}/about`,
  endpoint: (name: string) => `${PLUGIN_BASE_URL}/endpoint/${encodeURIComponent(name)}`,
  model: (name: string) => `${PLUGIN_BASE_URL}/model/${encodeURIComponent(name)}`,
};

/** withAppState appends the current data source, time range and refresh to a page's path, so a link keeps the view. */
export function withAppState(path: string): string {
  const search = locationService.getSearchObject();
  return urlUtil.renderUrl(
    path,
    Object.fromEntries(URL_KEYS.filter((k) => search[k] !== undefined).map((k) => [k, search[k]]))
  );
}

/** sceneState is what every page's scene starts from: the data-source variable and the time range, both in the URL. */
export function sceneState() {
  return {
    $timeRange: new SceneTimeRange({ from: 'now-1h', to: 'now' }),
    $variables: new SceneVariableSet({
      variables: [
        new DataSourceVariable({
          name: DS_VARIABLE,
          label: t('scenes.variable.datasource', 'Data source'),
          pluginId: DATASOURCE_TYPE,
        }),
      ],
    }),
    controls: [
      new VariableValueSelectors({}),
      new SceneControlsSpacer(),
      new SceneTimePicker({}),
      // Relative ranges move with the clock: the refresh picker reruns every query on its interval.
      new SceneRefreshPicker({ refresh: '1m' }), // Grafana's usual intervals
    ],
  };
}

/** queryRunner runs targets against the selected data source. */
export function queryRunner(targets: PanelSpec['targets'], maxDataPoints?: number): SceneQueryRunner {
  return new SceneQueryRunner({ datasource: DS_REF, queries: targets, maxDataPoints });
}

/** panelTitle is a drill-down panel's title in the user's language. */
export function panelTitle(id: string): string {
  switch (id) {
    case 'latency':
      return t('scenes.panel.latency', 'Latency: p95 TTFT and p95 TPOT');
    case 'throughput':
      return t('scenes.panel.throughput', 'Throughput: generated tokens/s');
    case 'queue':
      return t('scenes.panel.queue', 'Queue depth: running + waiting');
    case 'kv':
      return t('scenes.panel.kv', 'KV-cache pressure: usage % and preemptions/s');
    case 'dp-balance':
      return t('scenes.panel.dp-balance', 'DP balance: max/mean and idle ranks');
    case 'spec-decode':
      return t('scenes.panel.spec-decode', 'Spec-decode acceptance per draft position');
    case 'cache':
      return t('scenes.panel.cache', 'Prefix-cache hit rate');
    case 'ascend-kv':
      return t('scenes.panel.ascend-kv', 'KV usage % per DP rank');
    case 'ascend-batch':
      return t('scenes.panel.ascend-batch', 'Batch size per DP rank: average and p99');
    case 'ascend-tokens':
      return t('scenes.panel.ascend-tokens', 'Input / output tokens/s per DP rank');
    case 'ascend-ttft':
      return t('scenes.panel.ascend-ttft', 'Fine-grained TTFT p50 / p99 per DP rank');
    default:
      return id;
  }
}

/** timeseriesPanel is one drill-down panel with its own query runner and a link to Explore with its queries. */
export function timeseriesPanel(spec: PanelSpec): VizPanel {
  return PanelBuilders.timeseries()
    .setTitle(panelTitle(spec.id))
    .setData(queryRunner(spec.targets))
    .setUnit(spec.unit)
    .setHeaderActions(new ExploreLink({}))
    .build();
}

/** exploreUrl is Grafana's Explore with the given queries on the data source uid over the time range. */
export function exploreUrl(uid: string, queries: Array<Record<string, unknown>>, from: string, to: string): string {
  const datasource = { type: DATASOURCE_TYPE, uid };
  const panes = { a: { datasource: uid, queries: queries.map((q) => ({ ...q, datasource })), range: { from, to } } };
  return urlUtil.renderUrl('/explore', { schemaVersion: 1, panes: JSON.stringify(panes), orgId: 1 });
}

/** ExploreLink opens its panel's queries in Explore, on the selected data source and time range. */
export class ExploreLink extends SceneObjectBase {
  static Component = ({ model }: SceneComponentProps<ExploreLink>) => {
    const panel = sceneGraph.getAncestor(model, VizPanel);
    const runner = panel.state.$data as SceneQueryRunner | undefined;
    const { value: range } = sceneGraph.getTimeRange(model).useState();
    const uid = sceneGraph.interpolate(model, `\${${DS_VARIABLE}}`);
    if (!runner) {
      return null;
    }
    const href = exploreUrl(uid, runner.state.queries, range.raw.from.toString(), range.raw.to.toString());
    return (
      <LinkButton
        size="sm"
        variant="secondary"
        fill="text"
        icon="compass"
        href={locationUtil.assureBaseUrl(href)}
        target="_blank"
      >
        {t('scenes.explore', 'Explore')}
      </LinkButton>
    );
  };
}

/** navigate goes to an app page the way Grafana's links do, keeping the URL state. */
export function navigate(path: string) {
  locationService.push(withAppState(path));
}

/** selectedUid is the uid of the data source the page's variable selects. */
export function selectedUid(o: SceneObject): string {
  return sceneGraph.interpolate(o, `\${${DS_VARIABLE}}`);
}

/** fetchEndpoints reads the selected data source's endpoints resource: names, and in direct mode status and flavor. */
export async function fetchEndpoints(uid: string): Promise<EndpointStatus[]> {
  const ds = (await getDataSourceSrv().get({ uid })) as unknown as DataSource;
  const endpoints: unknown = await ds.getResource('endpoints');
  return Array.isArray(endpoints) ? endpoints : [];
}
