import React from 'react';
import { of, throwError } from 'rxjs';
import { AppRootProps, PluginType } from '@grafana/data';
import { locationService, setBackendSrv } from '@grafana/runtime';
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import App from './App';
import { endpointsResource, queryAnswer, simFleet } from '../../ct/fleet';
import { LocationRouter, installScenes } from '../../ct/scenes';
import type { VllmQuery } from '../../datasource/types';
import { testIds } from '../testIds';

// jsdom has no canvas to draw sparklines on; the browser tests (npm run test:ct) draw them.
jest.mock('@grafana/ui', () => ({
  ...jest.requireActual('@grafana/ui'),
  Sparkline: () => <span data-testid="sparkline" />,
}));

interface NavItem {
  text: string;
  url?: string;
  parentItem?: NavItem;
}

function crumbs(item?: NavItem): NavItem[] {
  return item ? [...crumbs(item.parentItem), item] : [];
}

// Grafana's page chrome, reduced to what the tests read: the title and the breadcrumbs Grafana builds from pageNav.
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  PluginPage: ({ children, pageNav }: { children: React.ReactNode; pageNav?: NavItem }) => (
    <div>
      <nav aria-label="Breadcrumbs">
        {crumbs(pageNav).map((c) => (
          <a key={c.text} href={c.url}>
            {c.text}
          </a>
        ))}
      </nav>
      <h1>{pageNav?.text}</h1>
      {children}
    </div>
  ),
}));

const props = {
  basename: 'a/inferscope-vllm-app',
  meta: { id: 'inferscope-vllm-app', name: 'InferScope for vLLM', type: PluginType.app, enabled: true, jsonData: {} },
  query: {},
  path: '',
  onNavChanged: jest.fn(),
} as unknown as AppRootProps;

interface Call {
  url: string;
  data?: { queries: VllmQuery[] };
}
let calls: Call[] = [];
let status: () => unknown = () => of({ data: { pluginId: 'inferscope-vllm-app', version: '0.1.0' } });
let prometheusMode = false;
let fleetSize = 3;

beforeEach(() => {
  calls = [];
  prometheusMode = false;
  fleetSize = 3;
  const fleet = () => simFleet(fleetSize);
  installScenes();
  setBackendSrv({
    fetch: (req: Call) => {
      calls.push(req);
      if (req.url.startsWith('/api/ds/query')) {
        return of({ data: queryAnswer(req.data!, fleet()), status: 200 });
      }
      if (req.url.endsWith('/resources/endpoints')) {
        // Prometheus mode lists the names only: no status, no detection.
        const endpoints = endpointsResource(fleet());
        return of({ data: prometheusMode ? endpoints.map((e) => ({ name: e.name })) : endpoints, status: 200 });
      }
      return status();
    },
  } as never);
});

function renderApp(path: string) {
  act(() => locationService.push(path));
  return render(
    <LocationRouter>
      <App {...props} />
    </LocationRouter>
  );
}

const queryCalls = () => calls.filter((c) => c.url.startsWith('/api/ds/query'));

describe('App', () => {
  it('lands on the fleet: one row per endpoint from one query round trip, the data source in the URL', async () => {
    const { unmount } = renderApp('/a/inferscope-vllm-app');
    const table = await screen.findByTestId(testIds.fleet.table('endpoint'));
    expect(await within(table).findByTestId(testIds.fleet.link('vllm-01'))).toBeInTheDocument();
    expect(within(table).getAllByRole('row')).toHaveLength(4); // header + 3 endpoints
    expect(within(table).getByText('unhealthy')).toBeInTheDocument();
    expect(within(table).getAllByTestId('sparkline').length).toBeGreaterThan(0);
    expect(queryCalls()).toHaveLength(1);
    expect(locationService.getSearchObject()['var-ds']).toBe('vllm');
    unmount();
  });

  it('works in Prometheus mode, where the endpoints resource has names only: states from the queries, no flavors', async () => {
    prometheusMode = true;
    fleetSize = 4;
    // The resource has no up field here: "down" comes from raw up in the fleet query.
    const { unmount } = renderApp('/a/inferscope-vllm-app?var-ds=vllm');
    const table = await screen.findByTestId(testIds.fleet.table('endpoint'));
    await within(table).findByTestId(testIds.fleet.link('vllm-03'));
    // The app keeps its scenes between visits (the earlier tests' answers): refresh for this fleet's.
    fireEvent.click(screen.getByTestId('data-testid RefreshPicker run button'));
    await within(table).findByText('vllm-ascend');
    const row = (name: string) => within(table).getByTestId(testIds.fleet.link(name)).closest('tr')!;
    expect(within(row('vllm-02')).getByText('down')).toBeInTheDocument();
    expect(within(row('vllm-00')).getByText('sleeping')).toBeInTheDocument();
    expect(within(row('vllm-00')).queryByText('vllm-v1')).toBeNull();
    // vLLM-Ascend still shows: its KV series are labelled dp.
    expect(within(row('vllm-03')).getByText('vllm-ascend')).toBeInTheDocument();
    unmount();
  });

  it('drills down to an endpoint, keeping the data source and time range', async () => {
    const { unmount } = renderApp('/a/inferscope-vllm-app?var-ds=vllm&from=now-6h&to=now');
    fireEvent.click(await screen.findByTestId(testIds.fleet.link('vllm-01')));
    expect(locationService.getLocation().pathname).toBe('/a/inferscope-vllm-app/endpoint/vllm-01');
    expect(locationService.getSearchObject()).toMatchObject({ 'var-ds': 'vllm', from: 'now-6h', to: 'now' });
    expect(await screen.findByRole('heading', { name: 'vllm-01' })).toBeInTheDocument();
    expect(await screen.findByText('Latency: p95 TTFT and p95 TPOT')).toBeInTheDocument();
    // Breadcrumbs: Fleet › Endpoints › vllm-01, the parents' links keeping the data source and time range.
    const nav = within(screen.getByRole('navigation', { name: 'Breadcrumbs' }));
    expect(nav.getAllByRole('link').map((a) => a.textContent)).toEqual(['Fleet', 'Endpoints', 'vllm-01']);
    expect(nav.getByRole('link', { name: 'Endpoints' })).toHaveAttribute(
      'href',
      '/a/inferscope-vllm-app?var-ds=vllm&from=now-6h&to=now&refresh=1m'
    );
    unmount();
  });

  it('filters the table from the URL', async () => {
    const { unmount } = renderApp('/a/inferscope-vllm-app?var-ds=vllm&filter=vllm-0%5B02%5D');
    const table = await screen.findByTestId(testIds.fleet.table('endpoint'));
    await within(table).findByTestId(testIds.fleet.link('vllm-00'));
    expect(within(table).queryByTestId(testIds.fleet.link('vllm-01'))).toBeNull();
    expect(screen.getByTestId(testIds.fleet.count)).toHaveTextContent('2 / 3');
    unmount();
  });

  it('keeps the overview on the About tab: the backend status and the shipped dashboards', async () => {
    const { unmount } = renderApp('/a/inferscope-vllm-app/about');
    expect(await screen.findByText(/version 0\.1\.0 is answering/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'vLLM minimal' })).toHaveAttribute('href', '/d/inferscope-vllm-minimal');
    unmount();
  });

  it('says plainly when the backend does not answer', async () => {
    status = () => throwError(() => ({ status: 503, data: { message: 'plugin unavailable' } }));
    const { unmount } = renderApp('/a/inferscope-vllm-app/about');
    expect(await screen.findByText(/did not answer: plugin unavailable/)).toBeInTheDocument();
    unmount();
  });
});
