import React from 'react';
import { fireEvent, render, screen } from '@testing-library/react';
import { DataSourceSettings } from '@grafana/data';
import { ConfigEditor } from './ConfigEditor';
import { testIds } from '../../components/testIds';
import { VllmOptions } from '../types';

function settings(jsonData: VllmOptions): DataSourceSettings<VllmOptions> {
  return { id: 1, uid: 'x', name: 'vLLM', type: 'inferscope-vllm-datasource', jsonData, secureJsonFields: {} } as unknown as DataSourceSettings<VllmOptions>;
}

describe('ConfigEditor', () => {
  it('adds, edits and removes endpoints in jsonData', () => {
    const onChange = jest.fn();
    const { rerender } = render(<ConfigEditor options={settings({ mode: 'direct', endpoints: [] })} onOptionsChange={onChange} />);
    fireEvent.click(screen.getByTestId(testIds.configEditor.addEndpoint));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ jsonData: { mode: 'direct', endpoints: [{ url: '' }] } }));

    rerender(<ConfigEditor options={settings({ mode: 'direct', endpoints: [{ url: '' }] })} onOptionsChange={onChange} />);
    fireEvent.change(screen.getByLabelText('Endpoint 1 URL'), { target: { value: 'http://127.0.0.1:8000/metrics' } });
    expect(onChange).toHaveBeenLastCalledWith(
      expect.objectContaining({ jsonData: { mode: 'direct', endpoints: [{ url: 'http://127.0.0.1:8000/metrics' }] } })
    );

    fireEvent.click(screen.getByTestId(testIds.configEditor.removeEndpoint(0)));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ jsonData: { mode: 'direct', endpoints: [] } }));
  });

  it('hides the endpoint list in Prometheus mode', () => {
    render(<ConfigEditor options={settings({ mode: 'prometheus' })} onOptionsChange={jest.fn()} />);
    expect(screen.queryByTestId(testIds.configEditor.addEndpoint)).not.toBeInTheDocument();
    expect(screen.getByText(/Query a Prometheus-compatible server/)).toBeInTheDocument();
  });

  it('switches mode through the radio group', () => {
    const onChange = jest.fn();
    render(<ConfigEditor options={settings({})} onOptionsChange={onChange} />);
    fireEvent.click(screen.getByLabelText('Prometheus'));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ jsonData: { mode: 'prometheus' } }));
  });
});
