import { DataSourceInstanceSettings } from '@grafana/data';
import { DataSource } from './datasource';
import { VllmOptions, VllmQuery } from './types';

const replace = jest.fn((s: string, _vars?: unknown, format?: string) =>
  s.replace('$model', format === 'regex' ? '(llama\\-3|mistral)' : '{llama-3,mistral}')
);
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getTemplateSrv: () => ({ replace }),
}));

describe('DataSource', () => {
  const ds = new DataSource({ id: 1, uid: 'u', type: 'inferscope-vllm-datasource', name: 'vLLM', jsonData: {} } as unknown as DataSourceInstanceSettings<VllmOptions>);

  it('expands multi-value variables as regex alternations in matcher fields only', () => {
    const q = { refId: '$model', queryType: 'latency', model: '$model', legendFormat: '$model', labels: { engine: '$model' } } as VllmQuery;
    const out = ds.applyTemplateVariables(q, {});
    expect(out.model).toBe('(llama\\-3|mistral)');
    expect(out.labels).toEqual({ engine: '(llama\\-3|mistral)' });
    expect(out.legendFormat).toBe('{llama-3,mistral}');
    expect(out.refId).toBe('$model');
  });

  it('skips hidden queries', () => {
    expect(ds.filterQuery({ refId: 'A', hide: true })).toBe(false);
    expect(ds.filterQuery({ refId: 'A' })).toBe(true);
  });

  it('lists variable values from the backend resources', async () => {
    const getResource = jest.spyOn(ds, 'getResource');
    getResource.mockResolvedValueOnce(['llama-3-8b', 'mistral-7b']);
    expect(await ds.metricFindQuery({ queryType: 'variable', resource: 'models' })).toEqual([
      { text: 'llama-3-8b' },
      { text: 'mistral-7b' },
    ]);
    expect(getResource).toHaveBeenCalledWith('models');
    getResource.mockResolvedValueOnce([{ name: 'v1-dp4', url: 'http://x' }]);
    expect(await ds.metricFindQuery({ queryType: 'variable', resource: 'endpoints' })).toEqual([{ text: 'v1-dp4' }]);
  });
});
