import { DataQueryRequest, DataSourceInstanceSettings } from '@grafana/data';
import { lastValueFrom } from 'rxjs';
import { DataSource, escapeRegex, promqlFormat } from './datasource';
import { VariableQuery, VllmOptions, VllmQuery } from './types';

const replace = jest.fn((s: string, _vars?: unknown, format?: string | ((v: unknown) => string)) =>
  s
    .replace(
      '$model',
      typeof format === 'function'
        ? format(['llama-3', 'mistral.7b'])
        : format === 'regex'
          ? '(llama\\-3|mistral)'
          : '{llama-3,mistral}'
    )
    .replace('$label', 'finished_reason')
);
jest.mock('@grafana/runtime', () => ({
  ...jest.requireActual('@grafana/runtime'),
  getTemplateSrv: () => ({ replace, getVariables: () => [] }),
}));

describe('DataSource', () => {
  const ds = new DataSource({
    id: 1,
    uid: 'u',
    type: 'inferscope-vllm-datasource',
    name: 'vLLM',
    jsonData: {},
  } as unknown as DataSourceInstanceSettings<VllmOptions>);

  afterEach(() => jest.restoreAllMocks());

  it('defaults new queries to KV-cache usage', () => {
    expect(ds.getDefaultQuery('panel-editor' as never)).toEqual({ queryType: 'kv_cache_usage' });
  });

  it('expands multi-value variables as regex alternations in matcher fields only', () => {
    const q = {
      refId: '$model',
      queryType: 'latency',
      model: '$model',
      legendFormat: '$model',
      labels: { engine: '$model' },
    } as VllmQuery;
    const out = ds.applyTemplateVariables(q, {});
    expect(out.model).toBe('(llama\\-3|mistral)');
    expect(out.labels).toEqual({ engine: '(llama\\-3|mistral)' });
    expect(out.legendFormat).toBe('{llama-3,mistral}');
    expect(out.refId).toBe('$model');
  });

  it('interpolates every string field, including metric, window and the PromQL expression', () => {
    const q: VllmQuery = {
      refId: 'A',
      queryType: 'promql',
      expr: 'up{model_name=~"$model"}',
      window: '$model',
      metric: '$model',
    };
    const out = ds.applyTemplateVariables(q, {});
    expect(out.expr).toBe('up{model_name=~"llama-3|mistral\\.7b"}');
    expect(out.window).toBe('{llama-3,mistral}');
    expect(out.metric).toBe('{llama-3,mistral}');
    expect(out.quantiles).toBeUndefined();
  });

  it('fills open matchers from ad-hoc filters and adds label matchers to raw queries', () => {
    const filters = [
      { key: 'model', operator: '=', value: 'Qwen2.5-7B' },
      { key: 'engine', operator: '=~', value: '0|1' },
      { key: 'finished_reason', operator: '=', value: 'stop' },
      { key: 'endpoint', operator: '!=', value: 'v0' },
      { key: 'role', operator: '=', value: 'decode' },
    ];
    const out = ds.applyTemplateVariables({ refId: 'A', queryType: 'raw', metric: 'x', engine: '.*' }, {}, filters);
    expect(out.model).toBe('Qwen2\\.5-7B');
    expect(out.engine).toBe('0|1');
    expect(out.role).toBe('decode');
    expect(out.endpoint).toBeUndefined();
    expect(out.labels).toEqual({ finished_reason: 'stop' });

    const kept = ds.applyTemplateVariables({ refId: 'A', queryType: 'latency', model: 'llama' }, {}, filters);
    expect(kept.model).toBe('llama');
    expect(kept.labels).toBeUndefined();
  });

  it('escapes regex metacharacters', () => {
    expect(escapeRegex('a.b(c)|d')).toBe('a\\.b\\(c\\)\\|d');
    expect(promqlFormat('a.b')).toBe('a.b');
    expect(promqlFormat(['a.b', 'c'])).toBe('a\\.b|c');
  });

  it('skips hidden queries', () => {
    expect(ds.filterQuery({ refId: 'A', hide: true })).toBe(false);
    expect(ds.filterQuery({ refId: 'A' })).toBe(true);
  });

  it('lists variable values from the backend resources', async () => {
    const getResource = jest.spyOn(ds, 'getResource');
    getResource.mockResolvedValueOnce(['llama-3-8b', 'mistral-7b']);
    expect(await ds.metricFindQuery({ queryType: 'variable', resource: 'models' })).toEqual([
      { text: 'llama-3-8b', value: 'llama-3-8b' },
      { text: 'mistral-7b', value: 'mistral-7b' },
    ]);
    expect(getResource).toHaveBeenCalledWith('models');
    getResource.mockResolvedValueOnce([{ name: 'v1-dp4', url: 'http://x' }]);
    expect(await ds.metricFindQuery({ queryType: 'variable', resource: 'endpoints' })).toEqual([
      { text: 'v1-dp4', value: 'v1-dp4' },
    ]);
  });

  it("lists one label's values, with variables in the label name expanded", async () => {
    const getResource = jest.spyOn(ds, 'getResource').mockResolvedValueOnce(['stop', 'length']);
    expect(await ds.metricFindQuery({ queryType: 'variable', resource: 'label-values', label: '$label' })).toEqual([
      { text: 'stop', value: 'stop' },
      { text: 'length', value: 'length' },
    ]);
    expect(getResource).toHaveBeenCalledWith('label-values', { label: 'finished_reason' });
  });

  it('reads legacy string variable queries', async () => {
    const getResource = jest.spyOn(ds, 'getResource').mockResolvedValue([]);
    await ds.metricFindQuery('engines');
    expect(getResource).toHaveBeenLastCalledWith('engines');
    await ds.metricFindQuery('label-values:finished_reason');
    expect(getResource).toHaveBeenLastCalledWith('label-values', { label: 'finished_reason' });
  });

  it('answers template variables through its custom variable support', async () => {
    jest.spyOn(ds, 'getResource').mockResolvedValueOnce(['0', '1']);
    const support = ds.variables as unknown as {
      query: (r: DataQueryRequest<VariableQuery>) => ReturnType<typeof ds.query>;
    };
    const request = {
      targets: [{ refId: 'A', queryType: 'variable', resource: 'engines' }],
      scopedVars: {},
    } as unknown as DataQueryRequest<VariableQuery>;
    const res = await lastValueFrom(support.query(request));
    expect(res.data).toEqual([
      { text: '0', value: '0' },
      { text: '1', value: '1' },
    ]);
  });

  it('offers ad-hoc keys and values from the resources', async () => {
    expect(await ds.getTagKeys()).toEqual([{ text: 'endpoint' }, { text: 'model' }, { text: 'engine' }, { text: 'role' }]);
    const getResource = jest.spyOn(ds, 'getResource').mockResolvedValueOnce(['m1']);
    expect(await ds.getTagValues({ key: 'model_name', filters: [] })).toEqual([{ text: 'm1' }]);
    expect(getResource).toHaveBeenCalledWith('models');
  });
});
