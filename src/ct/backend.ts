import { Observable, of, throwError } from 'rxjs';
import { config, setBackendSrv, setTemplateSrv } from '@grafana/runtime';
import { discoveredFleet, endpointsResource, queryAnswer, showcaseFleet, simFleet } from './fleet';

/**
 * HooksConfig is what a component test sends to the browser (playwright/index.tsx): the theme, the signed-in role,
 * and the backend's canned answers, keyed by "METHOD /path" or by "/path" for any method. A path matches a request
 * URL that ends with it (query string ignored); an answer of {"__status": n, ...} fails with that status.
 */
export interface HooksConfig {
  theme?: 'dark' | 'light';
  /** language is the user's Grafana language; the plugin's strings come from its locale files. */
  language?: 'en-US' | 'zh-Hans';
  /** plugin is the id whose translations the mounted component uses (the data source unless an app page). */
  plugin?: 'inferscope-vllm-app' | 'inferscope-vllm-datasource';
  role?: 'Admin' | 'Editor' | 'Viewer';
  routes?: Record<string, unknown>;
  /** fleet answers the app pages' data-source queries and endpoints resource from a simulated fleet of n endpoints. */
  fleet?: number;
  /** showcase replaces that fleet with the catalog screenshot's healthy fleet with one problem (showcaseFleet). */
  showcase?: boolean;
  /** discovered makes that fleet one Kubernetes discovery found, with roles from pod labels and its last endpoint gone. */
  discovered?: boolean;
}

/** Request is one call the components made, as the tests read it back from window.__requests. */
export interface Request {
  method: string;
  url: string;
  data?: unknown;
}

declare global {
  interface Window {
    __requests: Request[];
  }
}

function find(routes: Record<string, unknown>, method: string, url: string): { found: boolean; answer?: unknown } {
  const path = url.split('?')[0];
  if (typeof routes[FLEET] === 'function') {
    const answer = (routes[FLEET] as (path: string, data: unknown) => unknown)(path, routes[DATA]);
    if (answer !== undefined) {
      return { found: true, answer };
    }
  }
  for (const key of [`${method} `, '']) {
    const hit = Object.keys(routes).find(
      (k) => k.startsWith(key) && path.endsWith(k.slice(key.length)) && (key !== '' || !k.includes(' '))
    );
    if (hit !== undefined) {
      return { found: true, answer: routes[hit] };
    }
  }
  return { found: false };
}

function failure(answer: unknown): { status: number; data: unknown } | undefined {
  if (answer && typeof answer === 'object' && '__status' in answer) {
    const { __status, ...data } = answer as { __status: number };
    return { status: __status, data };
  }
  return undefined;
}

// Keys of the routes table under which a simulated fleet answers from the request's body.
const FLEET = '__fleet';
const DATA = '__data';

function fleetRoutes(n: number, showcase?: boolean, discovered?: boolean) {
  const fleet = showcase ? showcaseFleet() : discovered ? discoveredFleet(n) : simFleet(n);
  return (path: string, data: unknown) => {
    if (path === '/api/ds/query') {
      return queryAnswer(data as Parameters<typeof queryAnswer>[0], fleet);
    }
    return path.endsWith('/resources/endpoints') ? endpointsResource(fleet) : undefined;
  };
}

/** installBackend puts the fake backend behind getBackendSrv and a template service with one variable, $model. */
export function installBackend(hooks: HooksConfig | undefined) {
  const routes: Record<string, unknown> = { ...hooks?.routes };
  if (hooks?.fleet) {
    routes[FLEET] = fleetRoutes(hooks.fleet, hooks.showcase, hooks.discovered);
  }
  window.__requests = [];
  const respond = (method: string, url: string, data?: unknown): Promise<unknown> => {
    window.__requests.push({ method, url, data });
    const { found, answer } = find({ ...routes, [DATA]: data }, method, url);
    if (!found) {
      return Promise.reject({ status: 404, data: { error: `no route for ${method} ${url}` } });
    }
    const failed = failure(answer);
    return failed ? Promise.reject(failed) : Promise.resolve(answer);
  };
  setBackendSrv({
    get: (url: string) => respond('GET', url),
    post: (url: string, data?: unknown) => respond('POST', url, data),
    put: (url: string, data?: unknown) => respond('PUT', url, data),
    delete: (url: string) => respond('DELETE', url),
    fetch: (req: { url: string; method?: string; data?: unknown }): Observable<{ data: unknown; status: number }> => {
      const method = req.method ?? 'GET';
      window.__requests.push({ method, url: req.url, data: req.data });
      const { found, answer } = find({ ...routes, [DATA]: req.data }, method, req.url);
      const failed = found ? failure(answer) : { status: 404, data: { error: `no route for ${method} ${req.url}` } };
      return failed ? throwError(() => failed) : of({ data: answer, status: 200 });
    },
  } as never);
  setTemplateSrv({
    getVariables: () => [{ name: 'model' }],
    replace: (s?: string) => s ?? '',
    containsTemplate: () => false,
    updateTimeRange: () => {},
  } as never);
  const bootData = config.bootData as unknown as { user: { orgRole: string } };
  bootData.user = { ...(bootData.user ?? {}), orgRole: hooks?.role ?? 'Admin' };
}
