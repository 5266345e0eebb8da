import React from 'react';
import { t } from '@grafana/i18n';
import {
  EmbeddedScene,
  PanelBuilders,
  SceneCSSGridLayout,
  SceneComponentProps,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectState,
  SceneQueryRunner,
  SceneReactObject,
  sceneGraph,
} from '@grafana/scenes';
import { Agents } from '../../components/AppConfig/Agents';
import { ProfilerConfigs } from '../../components/AppConfig/ProfilerConfigs';
import { QUERY_TYPE } from '../../datasource/catalog.gen';
import { ascendPanels, detailPanels, diagnosisTarget, type Filter } from './queries';
import { ExploreLink, fetchEndpoints, queryRunner, sceneState, selectedUid, timeseriesPanel } from './shared';

function grid(children: SceneCSSGridLayout['state']['children']): SceneCSSGridLayout {
  return new SceneCSSGridLayout({
    templateColumns: 'repeat(auto-fit, minmax(420px, 1fr))',
    autoRows: '260px',
    rowGap: 1,
    columnGap: 1,
    children,
  });
}

interface AscendSectionState extends SceneObjectState {
  endpoint: string;
  /** body holds the profiler switch and the per-DP views once the endpoints resource says it is vLLM-Ascend. */
  body?: SceneFlexLayout;
}

/** AscendSection adds the profiler switch and the Ascend dashboard's per-DP views when the endpoint is vLLM-Ascend. */
export class AscendSection extends SceneObjectBase<AscendSectionState> {
  constructor(state: AscendSectionState) {
    super(state);
    this.addActivationHandler(() => {
      if (!this.state.body) {
        this.detect();
      }
    });
  }

  /**
   * detect reads the endpoint's flavor and URL from the data source's endpoints resource (direct mode); where that
   * has no detection (Prometheus mode), from the page's KV query: only vLLM-Ascend's ranks are labelled dp.
   */
  async detect() {
    const endpoints = await fetchEndpoints(selectedUid(this)).catch(() => []);
    const endpoint = endpoints.find((e) => e.name === this.state.endpoint);
    if (endpoint?.detection) {
      if (endpoint.detection.flavor === 'vllm-ascend') {
        this.showAscend(endpoint.url);
      }
      return;
    }
    const kv = sceneGraph.findObject(
      this.getRoot(),
      (o) => o instanceof SceneQueryRunner && o.state.queries[0]?.queryType === QUERY_TYPE.kv_cache_usage
    ) as SceneQueryRunner | null;
    const check = () => {
      const labelled = kv?.state.data?.series.some((f) => f.fields.some((field) => field.labels?.dp !== undefined));
      if (labelled && !this.state.body) {
        this.showAscend();
      }
    };
    check();
    if (kv) {
      this._subs.add(kv.subscribeToState(check));
    }
  }

  /** showAscend adds the profiler switch of the deployment behind the URL (direct mode) and the per-DP panels. */
  showAscend(url?: string) {
    const children = [new SceneFlexItem({ body: grid(ascendPanels(this.state.endpoint).map(timeseriesPanel)) })];
    if (url) {
      // The app's allow-listed profiler config files name their deployment's /metrics URL; the backend decides
      // who may switch (Admins, and Editors when the app allows it).
      // A deployment Grafana shares no disk with has a profiler agent listed under the same /metrics URL instead.
      const switcher = new SceneReactObject({ component: ProfilerConfigs, props: { metricsUrl: url } });
      const agent = new SceneReactObject({ component: Agents, props: { metricsUrl: url } });
      children.unshift(new SceneFlexItem({ body: switcher }), new SceneFlexItem({ body: agent }));
    }
    this.setState({ body: new SceneFlexLayout({ direction: 'column', children }) });
  }

  static Component = ({ model }: SceneComponentProps<AscendSection>) => {
    const { body } = model.useState();
    return body ? <body.Component model={body} /> : null;
  };
}

/** findingsPanel is the diagnosis table for the selection: symptom, value, likely cause and the knob to turn. */
export function findingsPanel(f: Filter) {
  return PanelBuilders.table()
    .setTitle(t('scenes.panel.findings', 'Diagnosis: symptom → likely cause → knob'))
    .setData(queryRunner([diagnosisTarget(f)]))
    .setHeaderActions(new ExploreLink({}))
    .build();
}

/**
 * detailScene is the endpoint page (filter.endpoint) or the model page (filter.model): the minimal dashboard's
 * panels, DP balance, spec decode per position, the prefix cache and the findings, narrowed to the selection.
 */
export function detailScene(f: Filter): EmbeddedScene {
  const children = [
    new SceneFlexItem({ body: grid(detailPanels(f).map(timeseriesPanel)) }),
    new SceneFlexItem({ minHeight: 300, body: findingsPanel(f) }),
  ];
  if (f.endpoint !== undefined) {
    children.push(new SceneFlexItem({ body: new AscendSection({ endpoint: f.endpoint }) }));
  }
  return new EmbeddedScene({ ...sceneState(), body: new SceneFlexLayout({ direction: 'column', children }) });
}
