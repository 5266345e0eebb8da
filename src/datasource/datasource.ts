import { CoreApp, DataSourceInstanceSettings, MetricFindValue, ScopedVars } from '@grafana/data';
import { DataSourceWithBackend, getTemplateSrv } from '@grafana/runtime';
import { DEFAULT_QUERY, REGEX_FIELDS, VariableQuery, VllmOptions, VllmQuery } from './types';

/** DataSource sends queries to the Go backend, which answers panels, Explore and alert rules alike. */
export class DataSource extends DataSourceWithBackend<VllmQuery, VllmOptions> {
  constructor(instanceSettings: DataSourceInstanceSettings<VllmOptions>) {
    super(instanceSettings);
  }

  getDefaultQuery(_: CoreApp): Partial<VllmQuery> {
    return DEFAULT_QUERY;
  }

  /**
   * applyTemplateVariables expands dashboard variables in every string field; the matcher fields are regular
   * expressions, so multi-value variables there expand as (a|b) with regex escaping, like Prometheus's.
   */
  applyTemplateVariables(query: VllmQuery, scopedVars: ScopedVars): VllmQuery {
    const srv = getTemplateSrv();
    const out: Record<string, unknown> = { ...query };
    for (const [key, value] of Object.entries(query)) {
      if (typeof value !== 'string' || key === 'refId' || key === 'datasource') {
        continue;
      }
      const regex = (REGEX_FIELDS as readonly string[]).includes(key);
      out[key] = regex ? srv.replace(value, scopedVars, 'regex') : srv.replace(value, scopedVars);
    }
    if (query.labels) {
      out.labels = Object.fromEntries(
        Object.entries(query.labels).map(([k, v]) => [k, srv.replace(v, scopedVars, 'regex')])
      );
    }
    return out as unknown as VllmQuery;
  }

  filterQuery(query: VllmQuery): boolean {
    return !query.hide;
  }

  /** metricFindQuery lists models, engines, endpoints or metric names for template variables. */
  async metricFindQuery(query: VariableQuery | string): Promise<MetricFindValue[]> {
    const resource = typeof query === 'string' ? query : query.resource;
    const values: Array<string | { name: string }> = await this.getResource(resource);
    return values.map((v) => ({ text: typeof v === 'string' ? v : v.name }));
  }
}
