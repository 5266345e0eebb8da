import React from 'react';
import { NEVER, of, Subject, throwError } from 'rxjs';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { PluginType } from '@grafana/data';
import AppConfig, { AppConfigProps, AppSettings } from './AppConfig';
import { ProfilerConfigList, ProfilerConfigState } from './profilerApi';
import { testIds } from '../testIds';

let mockRole = 'Admin';
const fetchMock = jest.fn();
const postMock = jest.fn();
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: fetchMock, post: postMock }),
  config: {
    get bootData() {
      return { user: { orgRole: mockRole } };
    },
  },
}));

const base = '/api/plugins/inferscope-vllm-app';
const path = '/var/lib/inferscope/ascend/ms_service_profiler_config.json';

function file(over: Partial<ProfilerConfigState> = {}): ProfilerConfigState {
  return {
    name: 'ascend-dp2',
    path,
    metricsUrl: 'http://vllm-ascend-dp2:8000/metrics',
    exists: true,
    metricEnable: 0,
    enable: 0,
    modified: '2026-11-22T05:00:00Z',
    exposed: false,
    ...over,
  };
}

function list(files: ProfilerConfigState[]): ProfilerConfigList {
  return { profilerConfigs: files, canWrite: true, allowEditorsToWrite: false };
}

/** routes answers backendSrv.fetch by method and URL; anything else fails the test loudly. */
function routes(handlers: Record<string, (req: { data?: unknown }) => unknown>) {
  fetchMock.mockImplementation((req: { url: string; method?: string; data?: unknown }) => {
    if (req.url === `${base}/resources/status`) {
      return of({ data: { pluginId: 'inferscope-vllm-app', version: '0.1.0' } });
    }
    const h = handlers[`${req.method ?? 'GET'} ${req.url}`];
    if (!h) {
      throw new Error(`unexpected request ${req.method ?? 'GET'} ${req.url}`);
    }
    return h(req);
  });
}

function props(enabled: boolean, jsonData: AppSettings = {}): AppConfigProps {
  return {
    plugin: {
      meta: { id: 'inferscope-vllm-app', name: 'InferScope', type: PluginType.app, enabled, pinned: true, jsonData },
    },
    query: {},
  } as unknown as AppConfigProps;
}

const listURL = `GET ${base}/resources/profiler-configs`;
const putURL = `PUT ${base}/resources/profiler-configs/ascend-dp2/metric-enable`;

describe('AppConfig', () => {
  beforeEach(() => {
    mockRole = 'Admin';
    fetchMock.mockReset();
    postMock.mockReset();
  });

  it('shows a loading state while the backend reads the files', async () => {
    routes({ [listURL]: () => NEVER });
    render(<AppConfig {...props(true)} />);
    expect(screen.getByTestId(testIds.appConfig.profilerLoading)).toBeInTheDocument();
    expect(await screen.findByText(/version 0\.1\.0 is answering/)).toBeInTheDocument();
  });

  it("shows the backend's error message", async () => {
    routes({
      [listURL]: () =>
        throwError(() => ({ status: 500, data: { error: 'app settings are not valid: path "x" is not absolute' } })),
    });
    render(<AppConfig {...props(true)} />);
    const alert = await screen.findByTestId(testIds.appConfig.profilerError);
    expect(alert).toHaveTextContent('app settings are not valid: path "x" is not absolute');
  });

  it('shows each file as it is on disk, and whether its metrics are exposed', async () => {
    routes({
      [listURL]: () =>
        of({
          data: list([
            file({ metricEnable: 1, enable: 1, exposed: true, profilingFamilies: 12 }),
            file({ name: 'missing', exists: false, modified: undefined, metricsUrl: undefined, exposed: null }),
            file({
              name: 'broken',
              error: 'malformed profiler config: unexpected end of JSON input',
              exposed: null,
              metricsUrl: undefined,
            }),
          ]),
        }),
    });
    render(<AppConfig {...props(true)} />);
    const row = await screen.findByTestId(testIds.appConfig.profilerRow('ascend-dp2'));
    expect(within(row).getByText('metric_enable: 1')).toBeInTheDocument();
    expect(within(row).getByText('enable (tracing): 1')).toBeInTheDocument();
    expect(within(row).getByText(/Last change:/)).toBeInTheDocument();
    expect(screen.getByTestId(testIds.appConfig.exposed('ascend-dp2'))).toHaveTextContent(
      'exposed at http://vllm-ascend-dp2:8000/metrics (12 families)'
    );
    expect(screen.getByTestId(testIds.appConfig.metricEnable('ascend-dp2'))).toBeChecked();
    expect(
      within(screen.getByTestId(testIds.appConfig.profilerRow('missing'))).getByText(/does not exist yet/)
    ).toBeInTheDocument();
    expect(screen.getByTestId(testIds.appConfig.profilerRow('broken'))).toHaveTextContent('malformed profiler config');
    expect(screen.getByTestId(testIds.appConfig.metricEnable('broken'))).toBeDisabled();
  });

  it.each([
    ['Viewer', {}],
    ['Editor', {}],
    ['Viewer', { allowEditorsToWrite: true }],
  ])('is read-only for a %s (settings %j)', async (role, settings) => {
    mockRole = role;
    routes({ [listURL]: () => of({ data: list([file()]) }) });
    render(<AppConfig {...props(true, settings)} />);
    expect(await screen.findByTestId(testIds.appConfig.metricEnable('ascend-dp2'))).toBeDisabled();
    expect(screen.getByTestId(testIds.appConfig.readOnly)).toBeInTheDocument();
    expect(screen.queryByTestId(testIds.appConfig.allowList)).not.toBeInTheDocument();
  });

  it('lets an Editor switch when the app allows Editors, without showing the allow-list', async () => {
    mockRole = 'Editor';
    routes({ [listURL]: () => of({ data: list([file()]) }) });
    render(<AppConfig {...props(true, { allowEditorsToWrite: true })} />);
    expect(await screen.findByTestId(testIds.appConfig.metricEnable('ascend-dp2'))).toBeEnabled();
    expect(screen.queryByTestId(testIds.appConfig.readOnly)).not.toBeInTheDocument();
    expect(screen.queryByTestId(testIds.appConfig.allowList)).not.toBeInTheDocument();
  });

  it('disables the switch while the write is in flight, then shows the new state', async () => {
    const answer = new Subject<{ data: ProfilerConfigState }>();
    const put = jest.fn(() => answer);
    routes({ [listURL]: () => of({ data: list([file()]) }), [putURL]: put });
    render(<AppConfig {...props(true)} />);
    const sw = await screen.findByTestId(testIds.appConfig.metricEnable('ascend-dp2'));
    expect(sw).not.toBeChecked();
    fireEvent.click(sw);
    expect(put).toHaveBeenCalledWith(expect.objectContaining({ data: { value: 1 } }));
    await waitFor(() => expect(sw).toBeDisabled());
    expect(screen.getByText('Saving…')).toBeInTheDocument();
    act(() => {
      answer.next({ data: file({ metricEnable: 1, exposed: null, modified: '2026-11-22T05:01:00Z' }) });
      answer.complete();
    });
    await waitFor(() => expect(sw).toBeEnabled());
    expect(sw).toBeChecked();
    expect(screen.getByText('metric_enable: 1')).toBeInTheDocument();
  });

  it("shows why a switch failed and keeps the file's state", async () => {
    routes({
      [listURL]: () => of({ data: list([file()]) }),
      [putURL]: () =>
        throwError(() => ({ status: 422, data: { error: 'malformed profiler config: it was not changed' } })),
    });
    render(<AppConfig {...props(true)} />);
    const sw = await screen.findByTestId(testIds.appConfig.metricEnable('ascend-dp2'));
    fireEvent.click(sw);
    expect(await screen.findByTestId(testIds.appConfig.toggleError('ascend-dp2'))).toHaveTextContent(
      'it was not changed'
    );
    expect(sw).not.toBeChecked();
    expect(sw).toBeEnabled();
  });

  it('saves the allow-list to the app settings and reads the files again', async () => {
    routes({ [listURL]: () => of({ data: list([]) }) });
    postMock.mockResolvedValue({});
    render(<AppConfig {...props(true)} />);
    fireEvent.click(await screen.findByTestId(testIds.appConfig.allowListAdd));
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'ascend-dp2' } });
    fireEvent.change(screen.getByLabelText('Config file path'), { target: { value: 'relative.json' } });
    expect(screen.getByText(/An absolute path/)).toBeInTheDocument();
    expect(screen.getByTestId(testIds.appConfig.save)).toBeDisabled();
    fireEvent.change(screen.getByLabelText('Config file path'), { target: { value: path } });
    fireEvent.change(screen.getByLabelText('Metrics URL (optional)'), {
      target: { value: 'http://vllm-ascend-dp2:8000/metrics' },
    });
    fireEvent.click(screen.getByTestId(testIds.appConfig.allowEditors));
    fireEvent.click(screen.getByTestId(testIds.appConfig.save));
    await waitFor(() =>
      expect(postMock).toHaveBeenCalledWith(
        `${base}/settings`,
        {
          enabled: true,
          pinned: true,
          jsonData: {
            profilerConfigs: [{ name: 'ascend-dp2', path, metricsUrl: 'http://vllm-ascend-dp2:8000/metrics' }],
            allowEditorsToWrite: true,
          },
        },
        expect.anything()
      )
    );
    await waitFor(() =>
      expect(fetchMock.mock.calls.filter(([r]) => r.url.endsWith('/profiler-configs'))).toHaveLength(2)
    );
  });

  it('tells the admin when the app is disabled', async () => {
    routes({ [listURL]: () => of({ data: list([]) }) });
    render(<AppConfig {...props(false)} />);
    expect(screen.getByText('App disabled')).toBeInTheDocument();
    expect(await screen.findByText(/is answering/)).toBeInTheDocument();
  });
});
