import React from 'react';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { AgentEditor } from './AgentEditor';
import { testIds } from '../testIds';

const postMock = jest.fn();
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getBackendSrv: () => ({ post: postMock }),
}));

describe('AgentEditor', () => {
  beforeEach(() => postMock.mockReset());

  it('saves the agents in jsonData and only a token typed now in secureJsonData', async () => {
    postMock.mockResolvedValue({});
    const onSaved = jest.fn();
    render(
      <AgentEditor
        enabled
        pinned
        settings={{ agents: [{ name: 'ascend-k8s', url: 'https://vllm-0:9443' }] }}
        secureFields={{ 'agentToken.ascend-k8s': true }}
        onSaved={onSaved}
      />
    );
    fireEvent.click(screen.getByTestId(testIds.appConfig.agentEditorAdd));
    fireEvent.change(screen.getByTestId(testIds.appConfig.agentEditorName(1)), { target: { value: 'edge' } });
    fireEvent.change(screen.getByTestId(testIds.appConfig.agentEditorUrl(1)), {
      target: { value: 'https://10.0.7.12:9443' },
    });
    fireEvent.change(screen.getByTestId(testIds.appConfig.agentEditorToken(1)), {
      target: { value: 'new-token-0123456789' },
    });
    fireEvent.click(screen.getByTestId(testIds.appConfig.agentEditorSave));
    await waitFor(() => expect(onSaved).toHaveBeenCalled());
    const [url, body] = postMock.mock.calls[0];
    expect(url).toBe('/api/plugins/inferscope-vllm-app/settings');
    expect(body.jsonData.agents).toEqual([
      { name: 'ascend-k8s', url: 'https://vllm-0:9443' },
      { name: 'edge', url: 'https://10.0.7.12:9443' },
    ]);
    // The stored token of ascend-k8s is left alone: only what was typed is sent.
    expect(body.secureJsonData).toEqual({ 'agentToken.edge': 'new-token-0123456789' });
  });

  it('shows why saving failed and refuses a row without a valid URL', async () => {
    postMock.mockRejectedValue({ data: { message: 'Permission denied' } });
    render(
      <AgentEditor
        enabled
        pinned
        settings={{ agents: [{ name: 'a', url: 'https://a:9443' }] }}
        secureFields={{}}
        onSaved={jest.fn()}
      />
    );
    fireEvent.click(screen.getByTestId(testIds.appConfig.agentEditorSave));
    expect(await screen.findByText('Permission denied')).toBeInTheDocument();
    fireEvent.change(screen.getByTestId(testIds.appConfig.agentEditorUrl(0)), {
      target: { value: 'https://user:pw@a:9443' },
    });
    expect(screen.getByTestId(testIds.appConfig.agentEditorSave)).toBeDisabled();
  });
});
