import { CoreApp, DataSourceInstanceSettings, ScopedVars } from '@grafana/data';
import { DataSourceWithBackend, getTemplateSrv } from '@grafana/runtime';
import { DEFAULT_QUERY, VllmOptions, VllmQuery } from './types';

/** DataSource sends queries to the Go backend, which answers panels, Explore and alert rules alike. */
export class DataSource extends DataSourceWithBackend<VllmQuery, VllmOptions> {
  constructor(instanceSettings: DataSourceInstanceSettings<VllmOptions>) {
    super(instanceSettings);
  }

  getDefaultQuery(_: CoreApp): Partial<VllmQuery> {
    return DEFAULT_QUERY;
  }

  /** applyTemplateVariables expands dashboard variables in every string field of the query. */
  applyTemplateVariables(query: VllmQuery, scopedVars: ScopedVars): VllmQuery {
    const srv = getTemplateSrv();
    const out: Record<string, unknown> = { ...query };
    for (const [key, value] of Object.entries(query)) {
      if (typeof value === 'string' && key !== 'refId' && key !== 'datasource') {
        out[key] = srv.replace(value, scopedVars);
      }
    }
    return out as unknown as VllmQuery;
  }

  filterQuery(query: VllmQuery): boolean {
    return !query.hide;
  }
}
