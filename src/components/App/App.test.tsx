import React from 'react';
import { MemoryRouter } from 'react-router-dom';
import { of, throwError } from 'rxjs';
import { AppRootProps, PluginType } from '@grafana/data';
import { render, screen } from '@testing-library/react';
import App from './App';
import { testIds } from '../testIds';

const fetchMock = jest.fn();
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: fetchMock }),
  PluginPage: ({ children }: { children: React.ReactNode }) => <div>{children}</div>,
}));

const props = {
  basename: 'a/inferscope-vllm-app',
  meta: { id: 'inferscope-vllm-app', name: 'InferScope for vLLM', type: PluginType.app, enabled: true, jsonData: {} },
  query: {},
  path: '',
  onNavChanged: jest.fn(),
} as unknown as AppRootProps;

function renderApp() {
  return render(
    <MemoryRouter future={{ v7_startTransition: true, v7_relativeSplatPath: true }}>
      <App {...props} />
    </MemoryRouter>
  );
}

describe('App overview', () => {
  beforeEach(() => fetchMock.mockReset());

  it('asks the backend for its status and shows the version', async () => {
    fetchMock.mockReturnValue(of({ data: { pluginId: 'inferscope-vllm-app', version: '0.1.0' } }));
    renderApp();
    expect(await screen.findByText(/version 0\.1\.0 is answering/)).toBeInTheDocument();
    expect(fetchMock).toHaveBeenCalledWith(
      expect.objectContaining({ url: '/api/plugins/inferscope-vllm-app/resources/status' })
    );
  });

  it('links every shipped dashboard by uid', async () => {
    fetchMock.mockReturnValue(of({ data: { pluginId: 'inferscope-vllm-app', version: '0.1.0' } }));
    renderApp();
    const link = await screen.findByRole('link', { name: 'vLLM minimal' });
    expect(link).toHaveAttribute('href', '/d/inferscope-vllm-minimal');
    expect(screen.getByTestId(testIds.overview.container)).toBeInTheDocument();
  });

  it('says plainly when the backend does not answer', async () => {
    fetchMock.mockReturnValue(throwError(() => ({ status: 503, data: { message: 'plugin unavailable' } })));
    renderApp();
    expect(await screen.findByText(/did not answer: plugin unavailable/)).toBeInTheDocument();
  });
});
