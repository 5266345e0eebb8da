// Generated from pkg/datasource/settings.go by `go test ./pkg/datasource -run SettingsTypeScript -update-settings`; do not edit.

/** SETTINGS are the data source settings' defaults and bounds (pkg/datasource settings.go). */
export const SETTINGS = {
  defaultScrapeInterval: '5s',
  defaultScrapeIntervalMs: 5000,
  defaultScrapeTimeout: '4s',
  defaultRetention: '1h',
  defaultMaxMemoryMB: 512,
  defaultMaxBodyMB: 16,
  defaultMaxSamples: 50000,
  minMemoryMB: 16,
  maxMemoryMB: 65536,
  maxBodyMB: 1024,
  maxSamples: 10000000,
  minScrapeIntervalMs: 1000,
  minScrapeInterval: '1s',
  maxScrapeIntervalMs: 3600000,
  maxScrapeInterval: '1h',
  maxRetentionMs: 2678400000,
  maxRetention: '744h',
  maxEndpoints: 1000,
  defaultDiscoveryInterval: '30s',
  minDiscoveryIntervalMs: 1000,
  minDiscoveryInterval: '1s',
  maxDiscoveryIntervalMs: 3600000,
  maxDiscoveryInterval: '1h',
  maxDiscoverySources: 16,
  defaultOverlapWindow: '10m',
  minOverlapWindowMs: 60000,
  maxOverlapWindowMs: 86400000,
  maxOverlapWindow: '24h',
  maxPeak: 1000000,
} as const;

/** MODE names the data source's modes; a data source that names none is in direct mode. */
export const MODE = {
  direct: 'direct',
  prometheus: 'prometheus',
} as const;

/** DISCOVERY_TYPES are the discovery sources' kinds (pkg/discovery), in the order the editor offers them. */
export const DISCOVERY_TYPES = ['dns', 'kubernetes', 'http', 'file'] as const;

/** KUBERNETES_ROLES are what a kubernetes source follows (pkg/discovery), the default first. */
export const KUBERNETES_ROLES = ['pod', 'endpointslice'] as const;
