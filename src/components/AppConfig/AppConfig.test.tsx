import React from 'react';
import { of } from 'rxjs';
import { render, screen } from '@testing-library/react';
import { PluginType } from '@grafana/data';
import AppConfig, { AppConfigProps } from './AppConfig';
import { testIds } from '../testIds';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ fetch: () => of({ data: { pluginId: 'inferscope-vllm-app', version: '0.1.0' } }) }),
}));

function props(enabled: boolean): AppConfigProps {
  return {
    plugin: { meta: { id: 'inferscope-vllm-app', name: 'InferScope', type: PluginType.app, enabled, jsonData: {} } },
    query: {},
  } as unknown as AppConfigProps;
}

describe('AppConfig', () => {
  it('says the profiler switch is not available yet instead of showing a dead control', async () => {
    render(<AppConfig {...props(true)} />);
    expect(screen.getByTestId(testIds.appConfig.profilerNotice)).toHaveTextContent(/not implemented in this version/);
    expect(screen.queryByRole('switch')).not.toBeInTheDocument();
    expect(await screen.findByText(/version 0\.1\.0 is answering/)).toBeInTheDocument();
  });

  it('tells the admin when the app is disabled', async () => {
    render(<AppConfig {...props(false)} />);
    expect(screen.getByText('App disabled')).toBeInTheDocument();
    expect(await screen.findByText(/is answering/)).toBeInTheDocument();
  });
});
