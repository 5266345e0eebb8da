import React from 'react';
import { of, throwError } from 'rxjs';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { Agents } from './Agents';
import { AgentList, AgentState, SymbolsReport } from './agentApi';
import { testIds } from '../testIds';

const fetchMock = jest.fn();
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: fetchMock }),
}));

const base = '/api/plugins/inferscope-vllm-app/resources/agents';

function agentState(over: Partial<AgentState> = {}): AgentState {
  return {
    name: 'ascend-k8s',
    url: 'https://vllm-ascend-0:9443',
    metricsUrl: 'http://vllm-ascend-0:8000/metrics',
    config: {
      path: '/etc/prof/ms_service_profiler_config.json',
      exists: true,
      metricEnable: 0,
      enable: 0,
      modified: '2026-11-22T05:00:00Z',
    },
    exposed: false,
    profile: { available: true, running: false, maxSeconds: 300 },
    ...over,
  };
}

function agentList(agents: AgentState[], admin: boolean): AgentList {
  return { agents, canWrite: admin, canProfile: admin, maxProfileSeconds: 600, maxTraceBytes: 64 << 20 };
}

/** routes answers backendSrv.fetch by method and URL, recording each request. */
function routes(handlers: Record<string, (req: { data?: unknown }) => unknown>) {
  const seen: string[] = [];
  fetchMock.mockImplementation((req: { url: string; method?: string; data?: unknown }) => {
    const key = `${req.method ?? 'GET'} ${req.url}`;
    seen.push(key + (req.data ? ' ' + JSON.stringify(req.data) : ''));
    const h = handlers[key];
    if (!h) {
      throw new Error(`unexpected request ${key}`);
    }
    return h(req);
  });
  return seen;
}

describe('Agents', () => {
  beforeEach(() => fetchMock.mockReset());

  it('switches metric_enable through the agent and shows the new state', async () => {
    const seen = routes({
      [`GET ${base}`]: () => of({ data: agentList([agentState()], true) }),
      [`PUT ${base}/ascend-k8s/metric-enable`]: () =>
        of({ data: { ...agentState().config, metricEnable: 1, modified: '2026-11-23T05:00:00Z' } }),
    });
    render(<Agents reloadKey={0} />);
    const row = await screen.findByTestId(testIds.appConfig.agentRow('ascend-k8s'));
    expect(row).toHaveTextContent('metric_enable: 0');
    expect(row).toHaveTextContent('Through the agent at https://vllm-ascend-0:9443');
    fireEvent.click(within(row).getByTestId(testIds.appConfig.agentMetricEnable('ascend-k8s')));
    await waitFor(() => expect(row).toHaveTextContent('metric_enable: 1'));
    expect(seen).toContain(`PUT ${base}/ascend-k8s/metric-enable {"value":1}`);
  });

  it('shows why an agent cannot be reached, and no switch or profiler for it', async () => {
    routes({
      [`GET ${base}`]: () =>
        of({
          data: agentList(
            [
              agentState({
                config: undefined,
                profile: undefined,
                configError:
                  'agent ascend-k8s: the agent is unreachable: https://vllm-ascend-0:9443: connection refused',
              }),
            ],
            true
          ),
        }),
    });
    render(<Agents reloadKey={0} />);
    const err = await screen.findByTestId(testIds.appConfig.agentError('ascend-k8s'));
    expect(err).toHaveTextContent('connection refused');
    expect(screen.getByTestId(testIds.appConfig.agentMetricEnable('ascend-k8s'))).toBeDisabled();
    expect(screen.queryByTestId(testIds.appConfig.agentProfiler('ascend-k8s'))).not.toBeInTheDocument();
  });

  it('offers torch profiles to Admins only', async () => {
    routes({ [`GET ${base}`]: () => of({ data: agentList([agentState()], false) }) });
    const { unmount } = render(<Agents reloadKey={0} />);
    await screen.findByTestId(testIds.appConfig.agentRow('ascend-k8s'));
    expect(screen.queryByTestId(testIds.appConfig.agentProfiler('ascend-k8s'))).not.toBeInTheDocument();
    expect(screen.getByTestId(testIds.appConfig.agentMetricEnable('ascend-k8s'))).toBeDisabled();
    unmount();

    const seen = routes({
      [`GET ${base}`]: () => of({ data: agentList([agentState()], true) }),
      [`POST ${base}/ascend-k8s/profile`]: () => of({ data: { available: true, running: true, maxSeconds: 300 } }),
      [`GET ${base}/ascend-k8s/traces`]: () =>
        of({
          data: {
            dir: '/tmp/vllm-prof',
            maxBytes: 64 << 20,
            traces: [
              { name: 'rank0.pt.trace.json', size: 2 << 20, modified: '2026-11-23T05:00:00Z' },
              { name: 'huge.pt.trace.json', size: 900 << 20, modified: '2026-11-23T04:00:00Z' },
            ],
          },
        }),
    });
    render(<Agents reloadKey={0} />);
    const prof = await screen.findByTestId(testIds.appConfig.agentProfiler('ascend-k8s'));
    fireEvent.change(within(prof).getByRole('spinbutton'), { target: { value: '45' } });
    fireEvent.click(within(prof).getByTestId(testIds.appConfig.agentProfileStart('ascend-k8s')));
    await waitFor(() => expect(seen).toContain(`POST ${base}/ascend-k8s/profile {"seconds":45}`));
    fireEvent.click(within(prof).getByTestId(testIds.appConfig.agentTraces('ascend-k8s')));
    const list = await screen.findByTestId(testIds.appConfig.agentTraceList('ascend-k8s'));
    expect(within(list).getByRole('link', { name: 'rank0.pt.trace.json' })).toHaveAttribute(
      'href',
      `${base}/ascend-k8s/traces/rank0.pt.trace.json`
    );
    expect(within(list).queryByRole('link', { name: 'huge.pt.trace.json' })).not.toBeInTheDocument();
    expect(list).toHaveTextContent('copy it from /tmp/vllm-prof on the host');
  });

  it('refuses a profile length outside 1 to the agent maximum', async () => {
    routes({ [`GET ${base}`]: () => of({ data: agentList([agentState()], true) }) });
    render(<Agents reloadKey={0} />);
    const prof = await screen.findByTestId(testIds.appConfig.agentProfiler('ascend-k8s'));
    fireEvent.change(within(prof).getByRole('spinbutton'), { target: { value: '301' } });
    expect(within(prof).getByTestId(testIds.appConfig.agentProfileStart('ascend-k8s'))).toBeDisabled();
    expect(prof).toHaveTextContent('Between 1 and 300');
  });

  it('shows the symbols file with its problems and which timers /metrics carries', async () => {
    const report: SymbolsReport = {
      path: '/etc/prof/service_metrics_symbols.yaml',
      exists: true,
      vllmVersion: '0.11.0',
      restartNeeded: true,
      entries: [
        {
          symbol: 'vllm.entrypoints.openai.serving_chat:OpenAIServingChat.create_chat_completion',
          line: 1,
          minVersion: '0.9.1',
          metrics: [{ name: 'server:create_chat_completion:duration', type: 'timer' }],
        },
        { symbol: 'vllm.engine.LLMEngine.step', line: 6, metrics: [{ name: 'engine:step', type: 'timer' }] },
      ],
      problems: [
        {
          entry: 1,
          line: 6,
          severity: 'error',
          message: 'symbol "vllm.engine.LLMEngine.step" is not module:Class.method',
        },
      ],
      exposed: { 'vllm_profiling_server:create_chat_completion:duration': true, 'vllm_profiling_engine:step': false },
    };
    routes({
      [`GET ${base}`]: () => of({ data: agentList([agentState()], false) }),
      [`GET ${base}/ascend-k8s/symbols`]: () => of({ data: report }),
    });
    render(<Agents reloadKey={0} />);
    fireEvent.click(await screen.findByTestId(testIds.appConfig.agentSymbolsCheck('ascend-k8s')));
    const table = await screen.findByTestId(testIds.appConfig.agentSymbols('ascend-k8s'));
    expect(table).toHaveTextContent('vLLM 0.11.0; changes take effect when vLLM restarts');
    const rows = within(table).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('on /metrics');
    expect(rows[2]).toHaveTextContent('not on /metrics');
    expect(rows[2]).toHaveTextContent('is not module:Class.method');
  });

  it('says why the list failed', async () => {
    routes({
      [`GET ${base}`]: () => throwError(() => ({ status: 500, data: { error: 'app settings are not valid' } })),
    });
    render(<Agents reloadKey={0} />);
    expect(await screen.findByText('app settings are not valid')).toBeInTheDocument();
  });
});
