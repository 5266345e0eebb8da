import React from 'react';
import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import { DataSourceSettings } from '@grafana/data';
import { ConfigEditor } from './ConfigEditor';
import { testIds } from '../../components/testIds';
import { VllmOptions, VllmSecureOptions } from '../types';
import { renderSettled } from '../testUtils';

const post = jest.fn();
const get = jest.fn();
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ post, get }),
}));

type Settings = DataSourceSettings<VllmOptions, VllmSecureOptions>;

function settings(jsonData: VllmOptions, extra: Partial<Settings> = {}): Settings {
  return {
    id: 1,
    uid: 'x',
    name: 'vLLM',
    type: 'inferscope-vllm-datasource',
    jsonData,
    secureJsonFields: {},
    ...extra,
  } as unknown as Settings;
}

beforeEach(() => {
  post.mockReset();
  get.mockReset().mockResolvedValue([]);
});

describe('ConfigEditor', () => {
  it('adds, edits and removes endpoints in jsonData', async () => {
    const onChange = jest.fn();
    const { rerender } = await renderSettled(
      <ConfigEditor options={settings({ mode: 'direct', endpoints: [] })} onOptionsChange={onChange} />
    );
    expect(screen.getByText('Direct mode needs at least one /metrics endpoint URL.')).toBeInTheDocument();
    fireEvent.click(screen.getByTestId(testIds.configEditor.addEndpoint));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', endpoints: [{ url: '' }] } })
    );

    rerender(
      <ConfigEditor options={settings({ mode: 'direct', endpoints: [{ url: '' }] })} onOptionsChange={onChange} />
    );
    fireEvent.change(screen.getByLabelText('Endpoint 1 URL'), { target: { value: 'http://127.0.0.1:8000/metrics' } });
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', endpoints: [{ url: 'http://127.0.0.1:8000/metrics' }] } })
    );
    fireEvent.change(screen.getByLabelText('Endpoint 1 name'), { target: { value: 'gpu-0' } });
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', endpoints: [{ url: '', name: 'gpu-0' }] } })
    );

    fireEvent.click(screen.getByTestId(testIds.configEditor.removeEndpoint(0)));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ jsonData: { mode: 'direct', endpoints: [] } }));
  });

  it('shows validation messages mirroring the backend', async () => {
    await renderSettled(
      <ConfigEditor
        options={settings({
          mode: 'direct',
          endpoints: [{ url: 'vllm-0:8000' }, { url: 'http://a/metrics' }, { url: 'http://a/metrics' }],
          scrapeInterval: '500ms',
          scrapeTimeout: '2s',
        })}
        onOptionsChange={jest.fn()}
      />
    );
    expect(screen.getByText(/Endpoint 1 is not an http\(s\) URL/)).toBeInTheDocument();
    expect(screen.getByText('Endpoint 3 is listed twice.')).toBeInTheDocument();
    expect(screen.getByText('The scrape interval must be at least 1s.')).toBeInTheDocument();
    expect(screen.getByText('The scrape timeout must not be longer than the scrape interval.')).toBeInTheDocument();
  });

  it('tests one endpoint through the probe resource and shows what it found', async () => {
    post.mockResolvedValueOnce({
      up: true,
      samples: 42,
      detection: { flavor: 'vLLM V1', ranks: ['0', '1'], rankLabel: 'engine', specDecode: true },
    });
    await renderSettled(
      <ConfigEditor
        options={settings({ mode: 'direct', endpoints: [{ url: 'http://a:8000/metrics' }] })}
        onOptionsChange={jest.fn()}
      />
    );
    await act(async () => {
      fireEvent.click(screen.getByTestId(testIds.configEditor.testEndpoint(0)));
    });
    expect(post).toHaveBeenCalledWith(
      '/api/datasources/uid/x/resources/probe',
      { url: 'http://a:8000/metrics' },
      { showErrorAlert: false }
    );
    expect(screen.getByTestId(testIds.configEditor.endpointMessage(0))).toHaveTextContent(
      'Up: vLLM V1, 2 engine rank(s), speculative decoding on; 42 samples'
    );
  });

  it('sends the saved credentials to an unsaved URL only when asked', async () => {
    post.mockResolvedValueOnce({ up: false, error: 'server returned HTTP status 401 Unauthorized' });
    post.mockResolvedValueOnce({ up: true, samples: 7, detection: { flavor: 'vLLM V1' } });
    await renderSettled(
      <ConfigEditor
        options={settings({ mode: 'direct', endpoints: [{ url: 'http://new:8000/metrics' }] })}
        onOptionsChange={jest.fn()}
      />
    );
    await act(async () => {
      fireEvent.click(screen.getByTestId(testIds.configEditor.testEndpoint(0)));
    });
    expect(post).toHaveBeenLastCalledWith(
      '/api/datasources/uid/x/resources/probe',
      { url: 'http://new:8000/metrics' },
      { showErrorAlert: false }
    );
    await act(async () => {
      fireEvent.click(screen.getByTestId(testIds.configEditor.testEndpointWithCredentials(0)));
    });
    expect(post).toHaveBeenLastCalledWith(
      '/api/datasources/uid/x/resources/probe',
      { url: 'http://new:8000/metrics', useStoredCredentials: true },
      { showErrorAlert: false }
    );
    expect(screen.getByTestId(testIds.configEditor.endpointMessage(0))).toHaveTextContent('Up: vLLM V1');
  });

  it('explains why an endpoint test failed', async () => {
    post.mockRejectedValueOnce({ status: 403, data: { error: 'only organization admins may test endpoints' } });
    await renderSettled(
      <ConfigEditor
        options={settings({ mode: 'direct', endpoints: [{ url: 'http://a:8000/metrics' }] })}
        onOptionsChange={jest.fn()}
      />
    );
    await act(async () => {
      fireEvent.click(screen.getByTestId(testIds.configEditor.testEndpoint(0)));
    });
    expect(screen.getByTestId(testIds.configEditor.endpointMessage(0))).toHaveTextContent(
      /only organization admins may test endpoints — testing one endpoint needs the data source saved/
    );
  });

  it('shows per-endpoint health of the saved settings', async () => {
    get.mockResolvedValue([
      {
        name: 'v1',
        url: 'http://v1/metrics',
        up: true,
        detection: { flavor: 'vLLM V1', ranks: ['0'], rankLabel: 'engine' },
      },
      { name: 'v0', url: 'http://v0/metrics', up: false, error: 'connection refused' },
    ]);
    await renderSettled(
      <ConfigEditor
        options={settings({ mode: 'direct', endpoints: [{ url: 'http://v1/metrics' }] })}
        onOptionsChange={jest.fn()}
      />
    );
    const status = screen.getByTestId(testIds.configEditor.endpointStatus);
    await waitFor(() => expect(status).toHaveTextContent('v1: up — vLLM V1, 1 engine rank(s)'));
    expect(status).toHaveTextContent('v0: down — connection refused');
    expect(get).toHaveBeenCalledWith('/api/datasources/uid/x/resources/endpoints', undefined, undefined, {
      showErrorAlert: false,
    });
  });

  it('keeps the bearer token in secureJsonData and shows it as configured once saved', async () => {
    const onChange = jest.fn();
    const { rerender } = await renderSettled(
      <ConfigEditor options={settings({ mode: 'direct' })} onOptionsChange={onChange} />
    );
    fireEvent.change(screen.getByLabelText('Bearer token'), { target: { value: 's3cret' } });
    const sent = onChange.mock.lastCall[0] as Settings;
    expect(sent.secureJsonData).toEqual({ bearerToken: 's3cret' });
    expect(JSON.stringify(sent.jsonData)).not.toContain('s3cret');

    rerender(
      <ConfigEditor
        options={settings({ mode: 'direct' }, { secureJsonFields: { bearerToken: true } })}
        onOptionsChange={onChange}
      />
    );
    expect(screen.getByLabelText('Bearer token')).toHaveValue('configured');
    fireEvent.click(screen.getAllByRole('button', { name: 'Reset' })[0]);
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ secureJsonFields: { bearerToken: false }, secureJsonData: { bearerToken: '' } })
    );
  });

  it("shows Grafana's connection, auth and HTTP settings and the server scrape interval in Prometheus mode", async () => {
    await renderSettled(
      <ConfigEditor
        options={settings({ mode: 'prometheus' }, { url: 'http://prometheus:9090', access: 'proxy' })}
        onOptionsChange={jest.fn()}
      />
    );
    expect(screen.queryByTestId(testIds.configEditor.addEndpoint)).not.toBeInTheDocument();
    expect(screen.getByText(/Query a Prometheus-compatible server/)).toBeInTheDocument();
    // @grafana/plugin-ui's components, which replace the deprecated DataSourceHttpSettings.
    for (const text of [
      'Connection',
      'Authentication',
      'TLS settings',
      'Skip TLS certificate validation',
      'HTTP headers',
      'Advanced HTTP settings',
    ]) {
      expect(screen.getByText(text)).toBeInTheDocument();
    }
    expect(screen.getByTestId(testIds.configEditor.scrapeInterval)).toBeInTheDocument();
    expect(screen.queryByTestId(testIds.configEditor.endpointStatus)).not.toBeInTheDocument();
  });

  it('turns refusing partial answers on in Prometheus mode only', async () => {
    const onChange = jest.fn();
    const { rerender } = await renderSettled(
      <ConfigEditor
        options={settings({ mode: 'prometheus' }, { url: 'http://thanos-query:10902' })}
        onOptionsChange={onChange}
      />
    );
    expect(screen.getByText('Refuse partial answers')).toBeInTheDocument();
    fireEvent.click(screen.getByTestId(testIds.configEditor.denyPartialResponse));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: expect.objectContaining({ denyPartialResponse: true }) })
    );
    rerender(<ConfigEditor options={settings({ mode: 'direct' })} onOptionsChange={onChange} />);
    expect(screen.queryByTestId(testIds.configEditor.denyPartialResponse)).not.toBeInTheDocument();
  });

  it('turns incremental querying off, and checks its overlap window, in Prometheus mode only', async () => {
    const onChange = jest.fn();
    const { rerender } = await renderSettled(
      <ConfigEditor
        options={settings({ mode: 'prometheus', incrementalQueryOverlapWindow: '10s' }, { url: 'http://prometheus:9090' })}
        onOptionsChange={onChange}
      />
    );
    expect(screen.getByText('The overlap window must be a duration from 1m to 24h.')).toBeInTheDocument();
    fireEvent.click(screen.getByTestId(testIds.configEditor.incrementalQuerying));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: expect.objectContaining({ incrementalQuerying: false }) })
    );
    rerender(
      <ConfigEditor
        options={settings({ mode: 'prometheus', incrementalQuerying: false }, { url: 'http://prometheus:9090' })}
        onOptionsChange={onChange}
      />
    );
    expect(screen.queryByTestId(testIds.configEditor.overlapWindow)).not.toBeInTheDocument();
    rerender(<ConfigEditor options={settings({ mode: 'direct' })} onOptionsChange={onChange} />);
    expect(screen.queryByTestId(testIds.configEditor.incrementalQuerying)).not.toBeInTheDocument();
  });

  it('keeps the direct-mode basic auth password in secureJsonData', async () => {
    const onChange = jest.fn();
    await renderSettled(
      <ConfigEditor
        options={settings(
          { mode: 'direct' },
          { basicAuth: true, basicAuthUser: 'u', secureJsonFields: { basicAuthPassword: true } }
        )}
        onOptionsChange={onChange}
      />
    );
    expect(screen.getByLabelText('Basic auth password')).toHaveValue('configured');
    fireEvent.change(screen.getByLabelText('Basic auth user'), { target: { value: 'admin' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ basicAuthUser: 'admin' }));
  });

  it('switches mode through the radio group', async () => {
    const onChange = jest.fn();
    await renderSettled(<ConfigEditor options={settings({})} onOptionsChange={onChange} />);
    fireEvent.click(screen.getByLabelText('Prometheus'));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ jsonData: { mode: 'prometheus' } }));
  });
  it('adds a discovery source, edits its fields and relabel rules, and checks what it needs', async () => {
    const onChange = jest.fn();
    const { rerender } = await renderSettled(
      <ConfigEditor options={settings({ mode: 'direct' })} onOptionsChange={onChange} />
    );
    fireEvent.click(screen.getByTestId(testIds.configEditor.addDiscovery));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', discovery: [{ type: 'dns' }] } })
    );

    rerender(
      <ConfigEditor options={settings({ mode: 'direct', discovery: [{ type: 'dns' }] })} onOptionsChange={onChange} />
    );
    // A source alone is enough for direct mode, but it needs its fields.
    expect(screen.queryByText('Direct mode needs at least one /metrics endpoint URL.')).not.toBeInTheDocument();
    expect(
      screen.getByText('Discovery source 1 needs its DNS name and port (SRV records carry their port).')
    ).toBeInTheDocument();
    fireEvent.click(screen.getByLabelText('Kubernetes'));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', discovery: [{ type: 'kubernetes' }] } })
    );

    const k8s = { type: 'kubernetes' as const, portName: 'http' };
    rerender(<ConfigEditor options={settings({ mode: 'direct', discovery: [k8s] })} onOptionsChange={onChange} />);
    expect(screen.queryByText(/Discovery source 1 needs/)).not.toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Namespaces (comma-separated; empty: all)'), {
      target: { value: 'llm, llm-2' },
    });
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({
        jsonData: { mode: 'direct', discovery: [{ ...k8s, namespaces: ['llm', 'llm-2'] }] },
      })
    );
    fireEvent.change(screen.getByLabelText('Role label'), { target: { value: 'llm-d.ai/role' } });
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', discovery: [{ ...k8s, roleLabel: 'llm-d.ai/role' }] } })
    );
    fireEvent.click(screen.getByText('Add Drop rule'));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({
        jsonData: { mode: 'direct', discovery: [{ ...k8s, drop: [{ label: '', regex: '' }] }] },
      })
    );
    // EndpointSlices instead of pods: the port is then the slice's port name.
    expect(screen.getByLabelText('Container port name')).toBeInTheDocument();
    fireEvent.click(screen.getByLabelText('EndpointSlices'));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({
        jsonData: { mode: 'direct', discovery: [{ ...k8s, kubernetesRole: 'endpointslice' }] },
      })
    );
    const slices = { ...k8s, kubernetesRole: 'endpointslice' as const };
    rerender(<ConfigEditor options={settings({ mode: 'direct', discovery: [slices] })} onOptionsChange={onChange} />);
    expect(screen.getByLabelText('Port name (in the slice)')).toHaveValue('http');
    fireEvent.click(screen.getByLabelText('Pods'));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', discovery: [k8s] } })
    );

    fireEvent.change(screen.getByTestId(testIds.configEditor.discoveryInterval), { target: { value: '100ms' } });
    fireEvent.blur(screen.getByTestId(testIds.configEditor.discoveryInterval));
    rerender(
      <ConfigEditor
        options={settings({ mode: 'direct', discovery: [k8s], discoveryInterval: '100ms' })}
        onOptionsChange={onChange}
      />
    );
    expect(screen.getByText('The discovery interval must be a duration from 1s to 1h.')).toBeInTheDocument();

    fireEvent.click(screen.getByTestId(testIds.configEditor.removeDiscovery(0)));
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', discovery: undefined, discoveryInterval: '100ms' } })
    );
  });

  it('shows discovered endpoints with their source and role, and departed ones as gone', async () => {
    get.mockResolvedValue([
      { name: 'vllm-00', up: true, source: 'llm-d', role: 'prefill', detection: { flavor: 'vllm-v1' } },
      { name: 'vllm-07', up: false, gone: true, source: 'llm-d', goneSince: '2026-11-26T21:00:00Z' },
    ]);
    await renderSettled(
      <ConfigEditor options={settings({ mode: 'direct', discovery: [{ type: 'dns' }] })} onOptionsChange={jest.fn()} />
    );
    const status = await screen.findByTestId(testIds.configEditor.endpointStatus);
    await waitFor(() =>
      expect(status).toHaveTextContent('vllm-00: up — vllm-v1 (found by llm-d, role prefill from its label)')
    );
    expect(status).toHaveTextContent('vllm-07: gone from llm-d — history kept, not scraped');
    expect(status).not.toHaveTextContent('down');
  });
  it('takes the role label of Prometheus mode and refuses what Prometheus cannot store', async () => {
    const onChange = jest.fn();
    const { rerender } = await renderSettled(
      <ConfigEditor options={settings({ mode: 'prometheus' })} onOptionsChange={onChange} />
    );
    fireEvent.change(screen.getByLabelText('Role label'), { target: { value: 'role' } });
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'prometheus', roleLabel: 'role' } })
    );
    rerender(
      <ConfigEditor options={settings({ mode: 'prometheus', roleLabel: 'llm-d.ai/role' })} onOptionsChange={onChange} />
    );
    expect(
      screen.getByText(
        'Use the label name as Prometheus stores it: letters, digits and _ (llm-d.ai/role becomes llm_d_ai_role).'
      )
    ).toBeInTheDocument();
  });
});
