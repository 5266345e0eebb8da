import { DEFAULT_HEADROOM, Endpoint, VllmOptions, VllmQuery } from './types';

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * parseDuration reads a Go duration such as "5s", "1m30s" or "500ms" (what the backend accepts) into milliseconds;
 * it returns undefined for anything else.
 */
export function parseDuration(s: string): number | undefined {
  const text = s.trim();
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) {
    return undefined;
  }
  let ms = 0;
  for (const [, num, , unit] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) {
    ms += parseFloat(num) * UNITS[unit];
  }
  return ms;
}

/** hasVariable says whether a field holds a template variable, which only Grafana can resolve. */
export function hasVariable(s: string): boolean {
  return /\$(\w|\{)|\[\[/.test(s);
}

/** SettingsErrors holds the config editor's messages, keyed by field (endpoint messages by index). */
export interface SettingsErrors {
  endpoints: Record<number, string>;
  endpointsMissing?: string;
  scrapeInterval?: string;
  scrapeTimeout?: string;
  retention?: string;
  maxMemoryMB?: string;
  limits?: string;
}

function endpointError(e: Endpoint, i: number, seen: Set<string>): string | undefined {
  let u: URL | undefined;
  try {
    u = new URL(e.url);
  } catch {
    u = undefined;
  }
  if (!u || !u.host || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
    return `Endpoint ${i + 1} is not an http(s) URL such as http://vllm-0:8000/metrics.`;
  }
  if (seen.has(e.url)) {
    return `Endpoint ${i + 1} is listed twice.`;
  }
  return undefined;
}

/** validateSettings mirrors pkg/datasource/settings.go's validation, so mistakes show before "Save & test". */
export function validateSettings(jsonData: VllmOptions): SettingsErrors {
  const errors: SettingsErrors = { endpoints: {} };
  const mode = jsonData.mode ?? 'direct';
  if (mode === 'direct') {
    const endpoints = jsonData.endpoints ?? [];
    if (endpoints.length === 0) {
      errors.endpointsMissing = 'Direct mode needs at least one /metrics endpoint URL.';
    }
    const seen = new Set<string>();
    endpoints.forEach((e, i) => {
      const msg = endpointError(e, i, seen);
      if (msg) {
        errors.endpoints[i] = msg;
      }
      seen.add(e.url);
    });
  }
  const interval = jsonData.scrapeInterval ? parseDuration(jsonData.scrapeInterval) : 5000;
  if (interval === undefined) {
    errors.scrapeInterval = 'Use a duration such as 5s or 1m.';
  } else if (interval < 1000) {
    errors.scrapeInterval = 'The scrape interval must be at least 1s.';
  }
  if (jsonData.scrapeTimeout) {
    const timeout = parseDuration(jsonData.scrapeTimeout);
    if (timeout === undefined) {
      errors.scrapeTimeout = 'Use a duration such as 4s.';
    } else if (interval !== undefined && timeout > interval) {
      errors.scrapeTimeout = 'The scrape timeout must not be longer than the scrape interval.';
    }
  }
  if (jsonData.retention) {
    const retention = parseDuration(jsonData.retention);
    if (retention === undefined) {
      errors.retention = 'Use a duration such as 1h or 30m.';
    } else if (interval !== undefined && retention < interval) {
      errors.retention = 'Retention must be at least one scrape interval.';
    }
  }
  if (jsonData.maxMemoryMB !== undefined && jsonData.maxMemoryMB !== 0 && jsonData.maxMemoryMB < 16) {
    errors.maxMemoryMB = 'The memory cap must be at least 16 MB.';
  }
  if ((jsonData.maxBodyMB ?? 0) < 0 || (jsonData.maxSamples ?? 0) < 0) {
    errors.limits = 'Scrape limits must not be negative.';
  }
  return errors;
}

/** QueryErrors holds the query editor's messages, keyed by query field. */
export type QueryErrors = Partial<
  Record<'endpoint' | 'model' | 'engine' | 'window' | 'quantiles' | 'headroom' | 'metric' | 'labels' | 'expr', string>
>;

function regexError(re: string | undefined): string | undefined {
  if (!re || hasVariable(re)) {
    return undefined;
  }
  try {
    new RegExp(`^(?:${re})$`);
    return undefined;
  } catch {
    return 'Not a valid regular expression.';
  }
}

/** validateQuery mirrors pkg/query/model.go's Validate for what can be checked before the query runs. */
export function validateQuery(q: VllmQuery): QueryErrors {
  const errors: QueryErrors = {};
  for (const field of ['endpoint', 'model', 'engine'] as const) {
    const msg = regexError(q[field]);
    if (msg) {
      errors[field] = msg;
    }
  }
  const badLabel = Object.entries(q.labels ?? {}).find(([name, re]) => !name || regexError(re));
  if (badLabel) {
    errors.labels = badLabel[0]
      ? `The matcher for ${badLabel[0]} is not a valid regular expression.`
      : 'Every label filter needs a label name.';
  }
  if (q.window && !hasVariable(q.window) && !parseDuration(q.window)) {
    errors.window = 'Use a positive duration such as 1m or 30s.';
  }
  if (q.quantiles?.some((v) => !(v >= 0 && v <= 1))) {
    errors.quantiles = 'Quantiles must be between 0 and 1, e.g. 0.5, 0.99.';
  }
  const headroom = q.headroom ?? DEFAULT_HEADROOM;
  if (q.queryType === 'capacity' && !(headroom >= 0 && headroom <= 0.9)) {
    errors.headroom = 'Headroom must be between 0 and 0.9.';
  }
  if (q.queryType === 'raw' && !q.metric) {
    errors.metric = 'Raw queries need a metric name.';
  }
  if (q.queryType === 'promql' && !q.expr?.trim()) {
    errors.expr = 'Enter a PromQL expression.';
  }
  return errors;
}
