import React from 'react';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { testIds } from '../../components/testIds';
import type { DataSource } from '../datasource';
import { VariableQuery } from '../types';
import { normalizeVariableQuery, VariableQueryEditor } from './VariableQueryEditor';
import { renderSettled } from '../testUtils';

async function setup(query: VariableQuery | string, values: string[] = ['llama-3-8b', 'mistral-7b']) {
  const listResource = jest.fn(async () => values);
  const ds = { listResource } as unknown as DataSource;
  const onChange = jest.fn();
  await renderSettled(
    <VariableQueryEditor query={query as VariableQuery} datasource={ds} onChange={onChange} onRunQuery={jest.fn()} />
  );
  return { onChange, listResource };
}

describe('VariableQueryEditor', () => {
  it('lists the resource and previews its values', async () => {
    const { listResource } = await setup({ refId: 'A', queryType: 'variable', resource: 'models' });
    await waitFor(() =>
      expect(screen.getByTestId(testIds.variableEditor.preview)).toHaveTextContent('2 value(s): llama-3-8b, mistral-7b')
    );
    expect(listResource).toHaveBeenCalledWith('models', undefined);
    expect(screen.getByText('model_name values seen on the endpoints.')).toBeInTheDocument();
  });

  it('switches resource and keeps the stored shape', async () => {
    const { onChange } = await setup({ refId: 'A', queryType: 'variable', resource: 'models' });
    fireEvent.click(screen.getByLabelText('Engines / DP ranks'));
    expect(onChange).toHaveBeenLastCalledWith({ refId: 'A', queryType: 'variable', resource: 'engines' });
    await waitFor(() => expect(screen.getByTestId(testIds.variableEditor.preview)).toHaveTextContent('2 value(s)'));
  });

  it('asks for a label when listing label values', async () => {
    const { onChange, listResource } = await setup({ refId: 'A', queryType: 'variable', resource: 'label-values' }, [
      'stop',
    ]);
    expect(listResource).not.toHaveBeenCalled();
    const label = screen.getByLabelText('Label');
    fireEvent.change(label, { target: { value: 'finished_reason' } });
    fireEvent.blur(label);
    expect(onChange).toHaveBeenLastCalledWith({
      refId: 'A',
      queryType: 'variable',
      resource: 'label-values',
      label: 'finished_reason',
    });
    await waitFor(() => expect(screen.getByTestId(testIds.variableEditor.preview)).toHaveTextContent('0 value(s)'));
  });

  it('shows why values could not be listed', async () => {
    const listResource = jest.fn().mockRejectedValue({ data: { error: 'Prometheus mode is not implemented' } });
    await renderSettled(
      <VariableQueryEditor
        query={{ refId: 'A', queryType: 'variable', resource: 'metrics' }}
        datasource={{ listResource } as unknown as DataSource}
        onChange={jest.fn()}
        onRunQuery={jest.fn()}
      />
    );
    await waitFor(() =>
      expect(screen.getByTestId(testIds.variableEditor.preview)).toHaveTextContent(
        'Could not list values: Prometheus mode is not implemented'
      )
    );
  });

  it('reads legacy string queries', async () => {
    expect(normalizeVariableQuery('engines')).toEqual({
      refId: 'variable',
      queryType: 'variable',
      resource: 'engines',
      label: undefined,
    });
    expect(normalizeVariableQuery('label-values:dp')).toMatchObject({ resource: 'label-values', label: 'dp' });
  });
});
