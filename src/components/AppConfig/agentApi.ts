import { lastValueFrom } from 'rxjs';
import { getBackendSrv } from '@grafana/runtime';
import { PLUGIN_ID } from '../../constants';

/** AgentSetting is one allow-listed inferscope-agent in the app's jsonData; its token is a secure field. */
export interface AgentSetting {
  name: string;
  /** url is the agent's base URL, https://host:9443. */
  url: string;
  metricsUrl?: string;
}

/** agentTokenField is the secureJsonData key of an agent's token (pkg/app AgentTokenField). */
export const agentTokenField = (name: string) => `agentToken.${name}`;

/** AGENT_CLIENT_KEY_FIELD is the secureJsonData key of the app's client key for agents requiring mTLS. */
export const AGENT_CLIENT_KEY_FIELD = 'agentClientKey';

/** AgentProfilerConfig is metric_enable and enable as the agent reads them. */
export interface AgentProfilerConfig {
  path: string;
  exists: boolean;
  metricEnable: 0 | 1;
  enable: 0 | 1;
  modified?: string;
  problem?: string;
}

/** ProfileStatus is the torch profiler's state as the agent drives it. */
export interface ProfileStatus {
  available: boolean;
  running: boolean;
  startedAt?: string;
  endsAt?: string;
  startedBy?: string;
  lastError?: string;
  maxSeconds: number;
  lastStopped?: string;
}

/** AgentState is one agent as GET agents shows it. */
export interface AgentState {
  name: string;
  url: string;
  metricsUrl?: string;
  error?: string;
  config?: AgentProfilerConfig;
  configError?: string;
  exposed: boolean | null;
  profilingFamilies?: number;
  exposedError?: string;
  profile?: ProfileStatus;
  profileError?: string;
}

/** AgentList is the backend's answer to GET agents. */
export interface AgentList {
  agents: AgentState[];
  canWrite: boolean;
  canProfile: boolean;
  maxProfileSeconds: number;
  maxTraceBytes: number;
}

/** SymbolMetric is one metric a symbols entry records. */
export interface SymbolMetric {
  name: string;
  type: string;
}

/** SymbolEntry is one hooked method of service_metrics_symbols.yaml. */
export interface SymbolEntry {
  symbol: string;
  minVersion?: string;
  maxVersion?: string;
  handler?: string;
  metrics?: SymbolMetric[];
  line: number;
}

/** SymbolProblem is one thing wrong with the symbols file; entry is -1 for the file. */
export interface SymbolProblem {
  entry: number;
  line?: number;
  severity: 'error' | 'warning';
  message: string;
}

/** SymbolsReport is the symbols file checked against the running vLLM (GET agents/{name}/symbols). */
export interface SymbolsReport {
  path: string;
  exists: boolean;
  modified?: string;
  error?: string;
  vllmVersion?: string;
  versionError?: string;
  metricsError?: string;
  entries: SymbolEntry[];
  problems: SymbolProblem[];
  exposed?: Record<string, boolean>;
  restartNeeded: boolean;
}

/** Trace is one finished torch trace file. */
export interface Trace {
  name: string;
  size: number;
  modified: string;
}

/** TraceList is the agent's trace directory. */
export interface TraceList {
  dir: string;
  traces: Trace[];
  truncated?: boolean;
  maxBytes: number;
}

/** PROFILING_PREFIX is what the profiler puts before each custom metric's name. */
export const PROFILING_PREFIX = 'vllm_profiling_';

const agents = `/api/plugins/${PLUGIN_ID}/resources/agents`;
const one = (name: string) => `${agents}/${encodeURIComponent(name)}`;

async function call<T>(url: string, method = 'GET', data?: object): Promise<T> {
  const res = await lastValueFrom(getBackendSrv().fetch<T>({ url, method, data, showErrorAlert: false }));
  return res.data;
}

/** listAgents reads every allow-listed agent's state. */
export const listAgents = () => call<AgentList>(agents);

/** setAgentMetricEnable switches metric_enable through the agent. */
export const setAgentMetricEnable = (name: string, value: 0 | 1) =>
  call<AgentProfilerConfig>(`${one(name)}/metric-enable`, 'PUT', { value });

/** agentSymbols reads the agent's checked symbols file. */
export const agentSymbols = (name: string) => call<SymbolsReport>(`${one(name)}/symbols`);

/** startProfile starts a torch profile of seconds (Admins). */
export const startProfile = (name: string, seconds: number) =>
  call<ProfileStatus>(`${one(name)}/profile`, 'POST', { seconds });

/** stopProfile stops the running torch profile (Admins). */
export const stopProfile = (name: string) => call<ProfileStatus>(`${one(name)}/profile/stop`, 'POST', {});

/** listTraces lists the agent's finished traces (Admins). */
export const listTraces = (name: string) => call<TraceList>(`${one(name)}/traces`);

/** traceUrl is where a trace downloads from, through the app backend (Admins). */
export const traceUrl = (name: string, trace: string) => `${one(name)}/traces/${encodeURIComponent(trace)}`;
