import { DataSourceInstanceSettings } from '@grafana/data';
import { DataSource } from './datasource';
import { VllmOptions, VllmQuery } from './types';

const replace = jest.fn((s: string) => s.replace('$model', 'llama-3-8b'));
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getTemplateSrv: () => ({ replace }),
}));

describe('DataSource', () => {
  const ds = new DataSource({ id: 1, uid: 'u', type: 'inferscope-vllm-datasource', name: 'vLLM', jsonData: {} } as unknown as DataSourceInstanceSettings<VllmOptions>);

  it('interpolates template variables in string fields but not the refId', () => {
    const q = { refId: '$model', queryType: 'latency', model: '$model' } as unknown as VllmQuery;
    const out = ds.applyTemplateVariables(q, {}) as unknown as Record<string, string>;
    expect(out.model).toBe('llama-3-8b');
    expect(out.refId).toBe('$model');
  });

  it('skips hidden queries', () => {
    expect(ds.filterQuery({ refId: 'A', hide: true })).toBe(false);
    expect(ds.filterQuery({ refId: 'A' })).toBe(true);
  });
});
