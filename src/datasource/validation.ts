import { t } from '@grafana/i18n';
import { tf } from '../i18n';
import { FIELD, Field, QUERY_TYPE, REGEX_FIELDS } from './catalog.gen';
import { MODE, SETTINGS } from './settings.gen';
import { DEFAULT_HEADROOM, Endpoint, FIELD_SPECS, FieldSpec, queryFields, VllmOptions, VllmQuery } from './types';

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
  discovery?: string;
  roleLabel?: string;
  scrapeInterval?: string;
  scrapeTimeout?: string;
  retention?: string;
  overlapWindow?: string;
  maxMemoryMB?: string;
  limits?: string;
  peaks?: string;
}

function parseURL(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** displayName is the backend's Endpoint.DisplayName: the name, else host:port as written. */
function displayName(e: Endpoint): string {
  if (e.name) {
    return e.name;
  }
  const u = parseURL(e.url);
  return u?.host || e.url;
}

/** targetKey mirrors the backend's: host and port (default made explicit), path without a trailing slash. */
function targetKey(u: URL): string {
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  return `${u.hostname.toLowerCase()}:${port}${u.pathname.replace(/\/$/, '')}`;
}

/** endpointErrors mirrors checkEndpoints: each target once, each display name once, no name equal to another host:port. */
function endpointErrors(endpoints: Endpoint[]): Record<number, string> {
  const errors: Record<number, string> = {};
  const targets = new Map<string, number>();
  const names = new Map<string, number>();
  const hosts = new Map<string, number>();
  endpoints.forEach((e, i) => {
    const u = parseURL(e.url);
    if (u?.host && !hosts.has(u.host)) {
      hosts.set(u.host, i);
    }
  });
  endpoints.forEach((e, i) => {
    const u = parseURL(e.url);
    if (!u || !u.host || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
      errors[i] = tf(
        'validation.endpoint-not-url',
        'Endpoint {{n}} is not an http(s) URL such as http://vllm-0:8000/metrics.',
        { n: i + 1 }
      );
      return;
    }
    const key = targetKey(u);
    const sameTarget = targets.get(key);
    if (sameTarget !== undefined) {
      errors[i] =
        endpoints[sameTarget].url === e.url
          ? tf('validation.endpoint-twice', 'Endpoint {{n}} is listed twice.', { n: i + 1 })
          : tf(
              'validation.endpoint-same-target',
              "Endpoint {{n}} scrapes endpoint {{other}}'s target too; list each target once.",
              { n: i + 1, other: sameTarget + 1 }
            );
      return;
    }
    targets.set(key, i);
    const name = displayName(e);
    const sameName = names.get(name);
    if (sameName !== undefined) {
      errors[i] = tf(
        'validation.endpoint-same-name',
        'Endpoint {{n}} has the name "{{name}}" of endpoint {{other}}; give each endpoint its own name.',
        { n: i + 1, name, other: sameName + 1 }
      );
      return;
    }
    names.set(name, i);
    const host = e.name ? hosts.get(e.name) : undefined;
    if (host !== undefined && host !== i && endpoints[host].name) {
      errors[i] = tf(
        'validation.endpoint-name-is-host',
        'Endpoint {{n}}\'s name "{{name}}" is endpoint {{other}}\'s host:port; choose another name.',
        { n: i + 1, name: e.name, other: host + 1 }
      );
    }
  });
  return errors;
}

/** discoveryError mirrors checkDiscovery's bounds: the interval and the sources' required fields. */
function discoveryError(jsonData: VllmOptions): string | undefined {
  const sources = jsonData.discovery ?? [];
  if (sources.length === 0) {
    return undefined;
  }
  if (jsonData.discoveryInterval) {
    const ms = parseDuration(jsonData.discoveryInterval);
    if (ms === undefined || ms < SETTINGS.minDiscoveryIntervalMs || ms > SETTINGS.maxDiscoveryIntervalMs) {
      return tf('validation.discovery-interval', 'The discovery interval must be a duration from {{min}} to {{max}}.', {
        min: SETTINGS.minDiscoveryInterval,
        max: SETTINGS.maxDiscoveryInterval,
      });
    }
  }
  for (const [i, s] of sources.entries()) {
    const missing =
      (s.type === 'dns' && (!s.dnsName || ((s.recordType ?? 'A') !== 'SRV' && !s.port))) ||
      (s.type === 'kubernetes' && !s.port && !s.portName) ||
      (s.type === 'http' && !/^https?:\/\/./.test(s.url ?? '')) ||
      (s.type === 'file' && !s.path);
    if (missing) {
      return tf('validation.discovery-source-incomplete', 'Discovery source {{n}} needs its {{what}}.', {
        n: i + 1,
        what:
          s.type === 'dns'
            ? t('validation.discovery-dns', 'DNS name and port (SRV records carry their port)')
            : s.type === 'kubernetes'
              ? t('validation.discovery-kubernetes', 'port number or container port name')
              : s.type === 'http'
                ? t('validation.discovery-http', 'http(s) URL')
                : t('validation.discovery-file', 'file path'),
      });
    }
  }
  return undefined;
}

/** validateSettings mirrors pkg/datasource/settings.go's validation, so mistakes show before "Save & test". */
export function validateSettings(jsonData: VllmOptions): SettingsErrors {
  const errors: SettingsErrors = { endpoints: {} };
  const mode = jsonData.mode ?? MODE.direct;
  if (mode === MODE.direct) {
    const endpoints = jsonData.endpoints ?? [];
    const sources = jsonData.discovery ?? [];
    if (endpoints.length === 0 && sources.length === 0) {
      errors.endpointsMissing = t(
        'validation.direct-mode-needs-at-least',
        'Direct mode needs at least one /metrics endpoint URL.'
      );
    }
    errors.discovery = discoveryError(jsonData);
    if (endpoints.length > SETTINGS.maxEndpoints) {
      errors.endpointsMissing = tf('validation.too-many-endpoints', 'At most {{max}} endpoints per data source.', {
        max: SETTINGS.maxEndpoints,
      });
    }
    errors.endpoints = endpointErrors(endpoints);
  }
  if (mode === MODE.prometheus && jsonData.roleLabel && !/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/.test(jsonData.roleLabel)) {
    errors.roleLabel = t(
      'validation.role-label',
      'Use the label name as Prometheus stores it: letters, digits and _ (llm-d.ai/role becomes llm_d_ai_role).'
    );
  }
  const interval = jsonData.scrapeInterval ? parseDuration(jsonData.scrapeInterval) : SETTINGS.defaultScrapeIntervalMs;
  if (interval === undefined) {
    errors.scrapeInterval = t('validation.interval-not-duration', 'Use a duration such as 5s or 1m.');
  } else if (interval < SETTINGS.minScrapeIntervalMs) {
    errors.scrapeInterval = tf('validation.interval-too-short', 'The scrape interval must be at least {{min}}.', {
      min: SETTINGS.minScrapeInterval,
    });
  } else if (interval > SETTINGS.maxScrapeIntervalMs) {
    errors.scrapeInterval = tf('validation.interval-too-long', 'The scrape interval must be at most {{max}}.', {
      max: SETTINGS.maxScrapeInterval,
    });
  }
  if (jsonData.scrapeTimeout) {
    const timeout = parseDuration(jsonData.scrapeTimeout);
    if (timeout === undefined) {
      errors.scrapeTimeout = t('validation.timeout-not-duration', 'Use a duration such as 4s.');
    } else if (interval !== undefined && timeout > interval) {
      errors.scrapeTimeout = t(
        'validation.the-scrape-timeout-must-not',
        'The scrape timeout must not be longer than the scrape interval.'
      );
    }
  }
  if (jsonData.retention) {
    const retention = parseDuration(jsonData.retention);
    if (retention === undefined) {
      errors.retention = t('validation.retention-not-duration', 'Use a duration such as 1h or 30m.');
    } else if (interval !== undefined && retention < interval) {
      errors.retention = t('validation.retention-must-be-at-least', 'Retention must be at least one scrape interval.');
    } else if (retention > SETTINGS.maxRetentionMs) {
      errors.retention = tf('validation.retention-must-be-at-most', 'Retention must be at most {{max}}.', {
        max: SETTINGS.maxRetention,
      });
    }
  }
  if (mode === MODE.prometheus && jsonData.incrementalQueryOverlapWindow) {
    const ms = parseDuration(jsonData.incrementalQueryOverlapWindow);
    if (ms === undefined || ms < SETTINGS.minOverlapWindowMs || ms > SETTINGS.maxOverlapWindowMs) {
      errors.overlapWindow = tf('validation.overlap-window', 'The overlap window must be a duration from {{min}} to {{max}}.', {
        // The minimum as a string would read as a copy of every other one-minute duration in the sources.
        min: `${SETTINGS.minOverlapWindowMs / 60_000}m`,
        max: SETTINGS.maxOverlapWindow,
      });
    }
  }
  const memory = jsonData.maxMemoryMB ?? 0;
  if (memory !== 0 && (memory < SETTINGS.minMemoryMB || memory > SETTINGS.maxMemoryMB)) {
    errors.maxMemoryMB = tf(
      'validation.the-memory-cap-must-be',
      'The memory cap must be between {{min}} and {{max}} MB.',
      {
        min: SETTINGS.minMemoryMB,
        max: SETTINGS.maxMemoryMB,
      }
    );
  }
  const body = jsonData.maxBodyMB ?? 0;
  const samples = jsonData.maxSamples ?? 0;
  if (body < 0 || samples < 0) {
    errors.limits = t('validation.scrape-limits-must-not-be', 'Scrape limits must not be negative.');
  } else if (body > SETTINGS.maxBodyMB || samples > SETTINGS.maxSamples) {
    errors.limits = tf(
      'validation.scrape-limits-are-at-most',
      'Scrape limits are at most {{body}} MB per body and {{samples}} samples per scrape.',
      { body: SETTINGS.maxBodyMB, samples: SETTINGS.maxSamples }
    );
  }
  const peaks = [jsonData.peakTflops ?? 0, jsonData.peakMemoryTBps ?? 0];
  if (peaks.some((p) => !(p >= 0 && p <= SETTINGS.maxPeak))) {
    errors.peaks = tf('validation.peaks-out-of-range', 'Peaks must be between 0 and {{max}}.', {
      max: SETTINGS.maxPeak,
    });
  }
  return errors;
}

/** QueryErrors holds the query editor's messages, keyed by query field. */
export type QueryErrors = Partial<Record<Field, string>>;

/** outside reports whether a number lies outside a field's bounds (pkg/query FieldSpecs). */
function outside(v: number, spec: FieldSpec): boolean {
  if (!Number.isFinite(v)) {
    return true;
  }
  if (spec.min !== undefined && (spec.minExclusive ? v <= spec.min : v < spec.min)) {
    return true;
  }
  return spec.max !== undefined && v > spec.max;
}

function regexError(re: string | undefined): string | undefined {
  if (!re || hasVariable(re)) {
    return undefined;
  }
  try {
    new RegExp(`^(?:${re})$`);
    return undefined;
  } catch {
    return t('validation.not-a-regex', 'Not a valid regular expression.');
  }
}

/** validateQuery mirrors pkg/query/model.go's Validate for what can be checked before the query runs. */
export function validateQuery(q: VllmQuery): QueryErrors {
  const errors: QueryErrors = {};
  for (const field of REGEX_FIELDS) {
    const msg = regexError(q[field]);
    if (msg) {
      errors[field] = msg;
    }
  }
  const badLabel = Object.entries(q.labels ?? {}).find(([name, re]) => !name || regexError(re));
  if (badLabel) {
    errors.labels = badLabel[0]
      ? tf('validation.bad-label-matcher', 'The matcher for {{label}} is not a valid regular expression.', {
          label: badLabel[0],
        })
      : t('validation.label-name-missing', 'Every label filter needs a label name.');
  }
  if (q.window && !hasVariable(q.window) && !parseDuration(q.window)) {
    errors.window = t('validation.use-a-positive-duration-such', 'Use a positive duration such as 1m or 30s.');
  }
  const fields = queryFields(q.queryType ?? QUERY_TYPE.kv_cache_usage, q.measure);
  const quantiles = FIELD_SPECS[FIELD.quantiles];
  if (q.quantiles && fields.reads(FIELD.quantiles)) {
    if (q.quantiles.some((v) => outside(v, quantiles))) {
      errors.quantiles = tf(
        'validation.quantiles-out-of-range',
        'Quantiles must be between {{min}} and {{max}}, e.g. 0.5, 0.99.',
        { min: quantiles.min, max: quantiles.max }
      );
    } else if (quantiles.maxItems && q.quantiles.length > quantiles.maxItems) {
      errors.quantiles = tf('validation.too-many-quantiles', 'At most {{max}} quantiles per query.', {
        max: quantiles.maxItems,
      });
    }
  }
  if (fields.reads(FIELD.threshold)) {
    const threshold = q.threshold;
    if (threshold === undefined ? fields.requires(FIELD.threshold) : outside(threshold, FIELD_SPECS[FIELD.threshold])) {
      errors.threshold = t('validation.threshold-positive', 'The SLO target must be a positive number of seconds.');
    }
  }
  const headroom = FIELD_SPECS[FIELD.headroom];
  if (fields.reads(FIELD.headroom) && outside(q.headroom ?? DEFAULT_HEADROOM, headroom)) {
    errors.headroom = tf('validation.headroom-out-of-range', 'Headroom must be between {{min}} and {{max}}.', {
      min: headroom.min,
      max: headroom.max,
    });
  }
  const limit = FIELD_SPECS[FIELD.limit];
  if (fields.reads(FIELD.limit) && q.limit !== undefined && (!Number.isInteger(q.limit) || outside(q.limit, limit))) {
    errors.limit = tf('validation.limit-out-of-range', 'Keep a whole number of series between 1 and {{max}}.', {
      max: limit.max,
    });
  }
  const buckets = FIELD_SPECS[FIELD.buckets];
  if (fields.reads(FIELD.buckets) && q.buckets?.length) {
    if (q.buckets.some((v, i) => !Number.isFinite(v) || (i > 0 && v <= q.buckets![i - 1]))) {
      errors.buckets = t(
        'validation.buckets-not-increasing',
        'Bucket bounds must be finite numbers in increasing order.'
      );
    } else if (buckets.maxItems && q.buckets.length > buckets.maxItems) {
      errors.buckets = tf('validation.too-many-buckets', 'At most {{max}} bucket bounds per query.', {
        max: buckets.maxItems,
      });
    } else if (q.limit) {
      errors.buckets = t('validation.buckets-with-limit', 'A distribution counts every series: clear Top to use it.');
    }
  }
  if (fields.requires(FIELD.metric) && !q.metric) {
    errors.metric = t('validation.raw-queries-need-a-metric', 'Raw queries need a metric name.');
  }
  if (fields.requires(FIELD.expr) && !q.expr?.trim()) {
    errors.expr = t('validation.enter-a-promql-expression', 'Enter a PromQL expression.');
  }
  return errors;
}
