import {
  AdHocVariableFilter,
  CoreApp,
  DataSourceGetTagValuesOptions,
  DataSourceInstanceSettings,
  MetricFindValue,
  ScopedVars,
} from '@grafana/data';
import { DataSourceWithBackend, getTemplateSrv } from '@grafana/runtime';
import { FIELD, QUERY_TYPE, REGEX_FIELDS } from './catalog.gen';
import { DEFAULT_QUERY, VariableQuery, VariableResource, VllmOptions, VllmQuery } from './types';
import { VllmVariableSupport } from './variables';

/** Ad-hoc filter keys and the query fields they set; other keys become label matchers of raw queries. */
const AD_HOC_FIELDS: Record<string, (typeof REGEX_FIELDS)[number]> = {
  endpoint: FIELD.endpoint,
  model: FIELD.model,
  model_name: FIELD.model,
  engine: FIELD.engine,
  dp: FIELD.engine,
  dp_rank: FIELD.engine,
  role: FIELD.role,
};

const AD_HOC_RESOURCES: Record<(typeof REGEX_FIELDS)[number], VariableResource> = {
  [FIELD.endpoint]: 'endpoints',
  [FIELD.model]: 'models',
  [FIELD.engine]: 'engines',
  [FIELD.role]: 'roles',
};

/** escapeRegex quotes a literal for a matcher the way Grafana's regex format does. */
export function escapeRegex(s: string): string {
  return s.replace(/[\\^$*+?.()|[\]{}]/g, '\\$&');
}

/**
 * promqlFormat interpolates variables into a PromQL expression the way Grafana's Prometheus data source does:
 * single values as they are, multiple values regex-escaped and joined with | for use inside =~ "…".
 */
export function promqlFormat(value: unknown): string {
  if (Array.isArray(value)) {
    return value.map((v) => escapeRegex(String(v))).join('|');
  }
  return String(value);
}

function adHocMatcher(f: AdHocVariableFilter): string | undefined {
  switch (f.operator) {
    case '=':
      return escapeRegex(f.value);
    case '=~':
      return f.value;
    case '=|':
      return `(${(f.values ?? [f.value]).map(escapeRegex).join('|')})`;
    default:
      // Negative matchers cannot be written as one RE2 expression; the backend has no field for them.
      return undefined;
  }
}

/** DataSource sends queries to the Go backend, which answers panels, Explore and alert rules alike. */
export class DataSource extends DataSourceWithBackend<VllmQuery, VllmOptions> {
  constructor(instanceSettings: DataSourceInstanceSettings<VllmOptions>) {
    super(instanceSettings);
    this.variables = new VllmVariableSupport(this);
  }

  getDefaultQuery(_: CoreApp): Partial<VllmQuery> {
    return DEFAULT_QUERY;
  }

  /**
   * applyTemplateVariables expands dashboard variables in every string field; the matcher fields are regular
   * expressions, so multi-value variables there expand as (a|b) with regex escaping, like Prometheus's.
   * Ad-hoc filters on endpoint, model and engine fill those matchers when the query leaves them open; other keys
   * become label matchers of raw queries. Only =, =~ and one-of filters can be expressed; others are ignored.
   */
  applyTemplateVariables(query: VllmQuery, scopedVars: ScopedVars, filters?: AdHocVariableFilter[]): VllmQuery {
    const srv = getTemplateSrv();
    const out: Record<string, unknown> = { ...query };
    for (const [key, value] of Object.entries(query)) {
      if (typeof value !== 'string' || key === 'refId' || key === 'datasource') {
        continue;
      }
      const regex = (REGEX_FIELDS as readonly string[]).includes(key);
      if (regex) {
        out[key] = srv.replace(value, scopedVars, 'regex');
      } else if (key === 'expr') {
        out[key] = srv.replace(value, scopedVars, promqlFormat);
      } else {
        out[key] = srv.replace(value, scopedVars);
      }
    }
    if (query.labels) {
      out.labels = Object.fromEntries(
        Object.entries(query.labels).map(([k, v]) => [srv.replace(k, scopedVars), srv.replace(v, scopedVars, 'regex')])
      );
    }
    for (const f of filters ?? []) {
      const matcher = adHocMatcher(f);
      if (matcher === undefined || query.queryType === QUERY_TYPE.promql) {
        continue;
      }
      const field = AD_HOC_FIELDS[f.key];
      if (field) {
        const current = out[field];
        if (!current || current === '.*') {
          out[field] = matcher;
        }
      } else if (query.queryType === QUERY_TYPE.raw) {
        out.labels = { ...(out.labels as Record<string, string> | undefined), [f.key]: matcher };
      }
    }
    return out as unknown as VllmQuery;
  }

  filterQuery(query: VllmQuery): boolean {
    return !query.hide;
  }

  /** listResource fetches one of the backend's list resources as plain strings (endpoints by name). */
  async listResource(resource: VariableResource, label?: string): Promise<string[]> {
    const values: Array<string | { name: string }> =
      resource === 'label-values'
        ? await this.getResource('label-values', { label: label ?? '' })
        : await this.getResource(resource);
    return values.map((v) => (typeof v === 'string' ? v : v.name));
  }

  /** metricFindQuery lists models, engines, endpoints, metric names or one label's values for template variables. */
  async metricFindQuery(
    query: Omit<VariableQuery, 'refId'> | string,
    options?: { scopedVars?: ScopedVars }
  ): Promise<MetricFindValue[]> {
    const q: Pick<VariableQuery, 'resource' | 'label'> =
      typeof query === 'string' ? parseStringVariableQuery(query) : query;
    const label = q.label ? getTemplateSrv().replace(q.label, options?.scopedVars) : undefined;
    const values = await this.listResource(q.resource ?? 'models', label);
    return values.map((text) => ({ text, value: text }));
  }

  /** getTagKeys offers the filters every query type understands; raw queries accept any label. */
  async getTagKeys(): Promise<MetricFindValue[]> {
    return REGEX_FIELDS.map((text) => ({ text }));
  }

  /** getTagValues lists values for an ad-hoc filter key from the backend's resources. */
  async getTagValues(options: DataSourceGetTagValuesOptions<VllmQuery>): Promise<MetricFindValue[]> {
    const field = AD_HOC_FIELDS[options.key];
    const values = field
      ? await this.listResource(AD_HOC_RESOURCES[field])
      : await this.listResource('label-values', options.key);
    return values.map((text) => ({ text }));
  }
}

/** parseStringVariableQuery reads legacy string variable queries: "models", or "label-values:<label>". */
function parseStringVariableQuery(query: string): Pick<VariableQuery, 'resource' | 'label'> {
  const [resource, label] = query.trim().split(/[:?]label=|:/, 2);
  return { resource: (resource || 'models') as VariableResource, label };
}
