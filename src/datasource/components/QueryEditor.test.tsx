import React from 'react';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { LoadingState, PanelData } from '@grafana/data';
import { testIds } from '../../components/testIds';
import type { DataSource } from '../datasource';
import { VllmQuery } from '../types';
import { QueryEditor } from './QueryEditor';
import { renderSettled } from '../testUtils';

jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getTemplateSrv: () => ({ getVariables: () => [{ name: 'model' }], replace: (s: string) => s }),
}));

jest.mock('@grafana/ui', () => ({
  ...jest.requireActual('@grafana/ui'),
  Combobox: jest.requireActual('../testUtils').MockCombobox,
  CodeEditor: (props: { value: string; onBlur?: (v: string) => void }) => (
    <textarea aria-label="code" defaultValue={props.value} onBlur={(e) => props.onBlur?.(e.currentTarget.value)} />
  ),
}));

const RESOURCES: Record<string, string[]> = {
  models: ['llama-3-8b', 'Qwen2.5-7B'],
  engines: ['0', '1'],
  endpoints: ['v1-dp4', 'ascend-dp2'],
  metrics: ['vllm:num_requests_running', 'vllm_profiling_forward:duration'],
  'label-values': ['stop', 'length'],
};

function fakeDatasource() {
  const listResource = jest.fn(async (resource: string) => RESOURCES[resource] ?? []);
  return { ds: { listResource } as unknown as DataSource, listResource };
}

async function setup(query: Partial<VllmQuery>, data?: PanelData) {
  const { ds, listResource } = fakeDatasource();
  const onChange = jest.fn();
  const onRunQuery = jest.fn();
  const utils = await renderSettled(
    <QueryEditor
      query={{ refId: 'A', ...query }}
      datasource={ds}
      onChange={onChange}
      onRunQuery={onRunQuery}
      data={data}
    />
  );
  return { ...utils, onChange, onRunQuery, listResource };
}

/** options lists what a (mocked) picker offers, by label. */
function options(testId: string): string[] {
  return Array.from(screen.getByTestId(testId).querySelectorAll('option')).map((o) => o.textContent ?? '');
}

async function pick(testId: string, value: string) {
  await act(async () => {
    fireEvent.change(screen.getByTestId(testId), { target: { value } });
  });
}

describe('QueryEditor', () => {
  it('explains the selected query type and shows only its fields', async () => {
    await setup({ queryType: 'kv_cache_usage' });
    expect(screen.getByText(/Percent of the KV-cache pool in use/)).toBeInTheDocument();
    expect(screen.getByTestId(testIds.queryEditor.measure)).toBeInTheDocument();
    expect(screen.queryByTestId(testIds.queryEditor.window)).not.toBeInTheDocument();
    expect(screen.queryByTestId(testIds.queryEditor.quantiles)).not.toBeInTheDocument();
    expect(screen.queryByTestId(testIds.queryEditor.headroom)).not.toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId(testIds.queryEditor.model)).toBeInTheDocument());
  });

  it('shows the latency family and quantiles for latency queries', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'latency', quantiles: [0.5] });
    expect(screen.getByTestId(testIds.queryEditor.latencyMetric)).toBeInTheDocument();
    const quantiles = screen.getByLabelText('Quantiles');
    fireEvent.change(quantiles, { target: { value: '0.5, 0.99' } });
    fireEvent.blur(quantiles);
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ quantiles: [0.5, 0.99] }));
    expect(onRunQuery).toHaveBeenCalled();
    fireEvent.change(quantiles, { target: { value: '0.5, abc' } });
    fireEvent.blur(quantiles);
    expect(await screen.findByText(/Quantiles must be numbers/)).toBeInTheDocument();
  });

  it('offers Ascend profiler timers from the metrics resource as latency families', async () => {
    await setup({ queryType: 'latency' });
    await waitFor(() =>
      expect(options(testIds.queryEditor.latencyMetric)).toContain('vllm_profiling_forward:duration')
    );
    expect(options(testIds.queryEditor.latencyMetric)).toContain('Time to first token');
    expect(options(testIds.queryEditor.latencyMetric)).not.toContain('vllm:num_requests_running');
  });

  it('names the rank-load measure of DP balance queries', async () => {
    await setup({ queryType: 'dp_balance' });
    expect(screen.getByText('Rank load measure')).toBeInTheDocument();
  });

  it('validates the capacity headroom', async () => {
    const { onChange } = await setup({ queryType: 'capacity', headroom: 0.95 });
    expect(screen.getByText('Headroom must be between 0 and 0.9.')).toBeInTheDocument();
    const input = screen.getByLabelText('Headroom');
    fireEvent.change(input, { target: { value: '0.2' } });
    fireEvent.blur(input);
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ headroom: 0.2 }));
  });

  it('keeps the worst series: limit and rank, validated', async () => {
    const { onChange } = await setup({ queryType: 'latency', groupBy: 'endpoint', limit: 5000 });
    expect(screen.getByText('Keep a whole number of series between 1 and 1000.')).toBeInTheDocument();
    const input = screen.getByLabelText('Series kept');
    fireEvent.change(input, { target: { value: '10' } });
    fireEvent.blur(input);
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ limit: 10 }));
    fireEvent.click(screen.getByRole('radio', { name: 'Lowest' }));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ rank: 'lowest' }));
  });

  it('shows validation messages for bad regexes and windows', async () => {
    await setup({ queryType: 'throughput', model: '(', window: '1d' });
    expect(screen.getByText('Not a valid regular expression.')).toBeInTheDocument();
    expect(screen.getByText(/positive duration/)).toBeInTheDocument();
  });

  it('fills the model picker from the models resource and template variables', async () => {
    const { onChange, listResource } = await setup({ queryType: 'queue' });
    await waitFor(() => expect(listResource).toHaveBeenCalledWith('models', undefined));
    await waitFor(() =>
      expect(options(testIds.queryEditor.model)).toEqual(['(none)', 'llama-3-8b', 'Qwen2.5-7B', '$model'])
    );
    await pick(testIds.queryEditor.model, 'Qwen2.5-7B');
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ model: 'Qwen2.5-7B' }));
  });

  it('reports resource errors beside the picker', async () => {
    const { ds, listResource } = fakeDatasource();
    listResource.mockRejectedValue({ data: { error: 'Prometheus mode is not implemented' } });
    await renderSettled(
      <QueryEditor
        query={{ refId: 'A', queryType: 'queue' }}
        datasource={ds}
        onChange={jest.fn()}
        onRunQuery={jest.fn()}
      />
    );
    expect(
      (await screen.findAllByText(/Could not list values: Prometheus mode is not implemented/)).length
    ).toBeGreaterThan(0);
  });

  it('builds raw queries from a metric name and label filters', async () => {
    const { onChange, listResource } = await setup({ queryType: 'raw' });
    expect(screen.getByText('Raw queries need a metric name.')).toBeInTheDocument();
    await waitFor(() => expect(options(testIds.queryEditor.rawMetric)).toContain('vllm:num_requests_running'));
    await pick(testIds.queryEditor.rawMetric, 'vllm:num_requests_running');
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ metric: 'vllm:num_requests_running' }));

    fireEvent.click(screen.getByTestId(testIds.queryEditor.addLabel));
    const name = screen.getByLabelText('Label 1 name');
    fireEvent.change(name, { target: { value: 'finished_reason' } });
    fireEvent.blur(name);
    await waitFor(() => expect(listResource).toHaveBeenCalledWith('label-values', 'finished_reason'));
    await waitFor(() => expect(options(testIds.queryEditor.labelValue(0))).toContain('stop'));
    await pick(testIds.queryEditor.labelValue(0), 'stop');
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ labels: { finished_reason: 'stop' } }));
  });

  it('edits PromQL and shows the executed query', async () => {
    const data = {
      state: LoadingState.Done,
      series: [{ refId: 'A', fields: [], length: 0, meta: { executedQueryString: 'sum(vllm:num_requests_running)' } }],
    } as unknown as PanelData;
    const { onChange, onRunQuery } = await setup({ queryType: 'promql', expr: 'up' }, data);
    expect(screen.queryByTestId(testIds.queryEditor.model)).not.toBeInTheDocument();
    fireEvent.blur(screen.getByLabelText('code'), { target: { value: 'rate(x[5m])' } });
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ expr: 'rate(x[5m])' }));
    expect(onRunQuery).toHaveBeenCalled();
    expect(screen.getByTestId(testIds.queryEditor.executedQuery)).toHaveTextContent('sum(vllm:num_requests_running)');
    expect(screen.getByText('PromQL run by Prometheus mode')).toBeInTheDocument();
  });

  it("drops the old type's fields when the type changes", async () => {
    const { onChange } = await setup({
      queryType: 'latency',
      measure: 'mean',
      quantiles: [0.5],
      model: 'm',
      legendFormat: 'x',
    });
    await pick(testIds.queryEditor.queryType, 'throughput');
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'throughput', model: 'm', legendFormat: 'x' });
  });

  it('asks for a PromQL expression', async () => {
    await setup({ queryType: 'promql' });
    expect(screen.getByText('Enter a PromQL expression.')).toBeInTheDocument();
  });

  it('changes how series are grouped', async () => {
    const { onChange, onRunQuery } = await setup({ queryType: 'throughput' });
    fireEvent.click(within(screen.getByTestId(testIds.queryEditor.groupBy)).getByLabelText('Model'));
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ groupBy: 'model' }));
    expect(onRunQuery).toHaveBeenCalled();
  });

  it('commits the legend on blur', async () => {
    const { onChange } = await setup({ queryType: 'queue' });
    const legend = screen.getByLabelText('Legend');
    fireEvent.change(legend, { target: { value: '{{endpoint}}' } });
    expect(onChange).not.toHaveBeenCalled();
    fireEvent.blur(legend);
    expect(onChange).toHaveBeenLastCalledWith(expect.objectContaining({ legendFormat: '{{endpoint}}' }));
  });
});
