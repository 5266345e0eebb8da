import { t } from '@grafana/i18n';
import { EmbeddedScene, SceneApp, SceneAppPage, SceneReactObject, type SceneRouteMatch } from '@grafana/scenes';
import { OverviewBody } from '../Overview';
import { detailScene } from './detail';
import { fleetScene } from './fleet';
import { ROUTES, URL_KEYS } from './shared';

function param(match: SceneRouteMatch<Record<string, string>>, name: string): string {
  return match.params[name] ?? '';
}

/** fleetApp is the app's pages: the fleet (endpoints and models), the drill-downs, and what ships with the app. */
export function fleetApp(): SceneApp {
  const endpoints: SceneAppPage = new SceneAppPage({
    title: t('scenes.tab.endpoints', 'Endpoints'),
    url: ROUTES.fleet,
    routePath: 'endpoints/*',
    preserveUrlKeys: URL_KEYS,
    getScene: () => fleetScene('endpoint'),
    drilldowns: [
      {
        routePath: 'endpoint/:endpoint/*',
        getPage: (match, parent) => {
          const name = param(match, 'endpoint');
          return new SceneAppPage({
            title: name,
            subTitle: t('scenes.endpoint.subtitle', 'One endpoint, per engine / DP rank'),
            url: ROUTES.endpoint(name),
            routePath: 'endpoint/:endpoint/*',
            preserveUrlKeys: URL_KEYS,
            getParentPage: () => parent,
            getScene: () => detailScene({ endpoint: name }),
          });
        },
      },
    ],
  });
  const models: SceneAppPage = new SceneAppPage({
    title: t('scenes.tab.models', 'Models'),
    url: ROUTES.models,
    routePath: 'models/*',
    preserveUrlKeys: URL_KEYS,
    getScene: () => fleetScene('model'),
    drilldowns: [
      {
        routePath: 'model/:model/*',
        getPage: (match, parent) => {
          const name = param(match, 'model');
          return new SceneAppPage({
            title: name,
            subTitle: t('scenes.model.subtitle', 'One model across the endpoints serving it'),
            url: ROUTES.model(name),
            routePath: 'model/:model/*',
            preserveUrlKeys: URL_KEYS,
            getParentPage: () => parent,
            getScene: () => detailScene({ model: name }),
          });
        },
      },
    ],
  });
  const about = new SceneAppPage({
    title: t('scenes.tab.about', 'About'),
    url: ROUTES.about,
    routePath: 'about/*',
    getScene: () => new EmbeddedScene({ body: new SceneReactObject({ component: OverviewBody }) }),
  });
  return new SceneApp({
    name: 'inferscope-vllm-app',
    urlSyncOptions: { updateUrlOnInit: true, createBrowserHistorySteps: true },
    pages: [
      new SceneAppPage({
        title: t('scenes.fleet.title', 'Fleet'),
        subTitle: t(
          'scenes.fleet.subtitle',
          'Every endpoint of the selected data source: state, KV-cache pressure, queue, latency, throughput, DP balance, speculative decoding and diagnosis findings.'
        ),
        url: ROUTES.fleet,
        routePath: '*',
        preserveUrlKeys: URL_KEYS,
        tabs: [endpoints, models, about],
      }),
    ],
  });
}
