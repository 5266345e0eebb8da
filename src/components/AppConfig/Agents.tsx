import React, { useCallback, useEffect, useState } from 'react';
import { t } from '@grafana/i18n';
import { dateTimeFormat } from '@grafana/data';
import { Alert, Badge, Button, Field, Input, LoadingPlaceholder, Stack, Switch } from '@grafana/ui';
import { tf } from '../../i18n';
import { errorMessage } from '../useBackendStatus';
import { sameMetricsUrl, SwitchProblem, SwitchState } from './ProfilerConfigs';
import { testIds } from '../testIds';
import {
  AgentList,
  AgentProfilerConfig,
  AgentState,
  agentSymbols,
  listAgents,
  listTraces,
  PROFILING_PREFIX,
  setAgentMetricEnable,
  startProfile,
  stopProfile,
  SymbolsReport,
  TraceList,
  traceUrl,
} from './agentApi';

type Load = { state: 'loading' } | { state: 'error'; message: string } | { state: 'ok'; list: AgentList };

interface Props {
  /** reloadKey changes after the settings are saved, to read the new list. */
  reloadKey?: number;
  /** metricsUrl, when set, shows only the agent of the deployment with that /metrics URL (an endpoint's page). */
  metricsUrl?: string;
}

/**
 * Agents shows each allow-listed inferscope-agent's deployment: metric_enable through the agent, its symbols file
 * checked against the running vLLM, and for Admins torch profiles and their traces. The backend enforces every rule
 * the page shows (and the agent again, by its token).
 */
export function Agents({ reloadKey = 0, metricsUrl }: Props) {
  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let cancelled = false;
    listAgents()
      .then((list) => {
        if (!cancelled) {
          const agents = list.agents.filter(
            (a) => metricsUrl === undefined || (!!a.metricsUrl && sameMetricsUrl(a.metricsUrl, metricsUrl))
          );
          setLoad({ state: 'ok', list: { ...list, agents } });
        }
      })
      .catch((err: unknown) => !cancelled && setLoad({ state: 'error', message: errorMessage(err) }));
    return () => {
      cancelled = true;
    };
  }, [version, reloadKey, metricsUrl]);
  // The rows stay while the list is read again, so a row's symbols table and trace list survive a refresh.
  const refresh = useCallback(() => setVersion((v) => v + 1), []);
  if (load.state === 'ok' && load.list.agents.length === 0) {
    return null;
  }
  return (
    <div data-testid={testIds.appConfig.agents}>
      <Stack direction="column" gap={2}>
        <Stack direction="row" justifyContent="space-between" alignItems="center">
          <h3>{t('agents.heading', 'Deployments behind a profiler agent')}</h3>
          <Button variant="secondary" icon="sync" size="sm" onClick={refresh} disabled={load.state === 'loading'}>
            {t('profiler-configs.refresh', 'Refresh')}
          </Button>
        </Stack>
        {load.state === 'loading' && <LoadingPlaceholder text={t('agents.loading', 'Asking the agents…')} />}
        {load.state === 'error' && (
          <Alert severity="error" title={t('agents.list-failed', 'Could not list the agents')}>
            {load.message}
          </Alert>
        )}
        {load.state === 'ok' &&
          load.list.agents.map((a) => <AgentRow key={a.name} agent={a} list={load.list} onChanged={refresh} />)}
      </Stack>
    </div>
  );
}

interface RowProps {
  agent: AgentState;
  list: AgentList;
  onChanged: () => void;
}

function AgentRow({ agent, list, onChanged }: RowProps) {
  // A switch's answer stands until the list is read again (a new agent object).
  const [switched, setSwitched] = useState<{ of: AgentState; config: AgentProfilerConfig } | undefined>();
  const config = switched?.of === agent ? switched.config : agent.config;
  const [pending, setPending] = useState(false);
  const [rowError, setRowError] = useState('');
  const toggle = async () => {
    if (!config) {
      return;
    }
    setPending(true);
    setRowError('');
    try {
      setSwitched({ of: agent, config: await setAgentMetricEnable(agent.name, config.metricEnable === 1 ? 0 : 1) });
    } catch (err: unknown) {
      setRowError(errorMessage(err));
    } finally {
      setPending(false);
    }
  };
  return (
    <div data-testid={testIds.appConfig.agentRow(agent.name)}>
      <Stack direction="column" gap={1}>
        <Field
          label={tf('profiler-configs.switch', '{{name}}: metric collection (metric_enable)', { name: agent.name })}
          description={tf('agents.through', 'Through the agent at {{url}}', { url: agent.url })}
        >
          <Switch
            id={`inferscope-agent-metric-enable-${agent.name}`}
            value={config?.metricEnable === 1}
            disabled={!list.canWrite || pending || !config}
            onChange={toggle}
            data-testid={testIds.appConfig.agentMetricEnable(agent.name)}
          />
        </Field>
        {config && (
          <Stack direction="row" gap={1} wrap="wrap">
            <SwitchState state={config} />
            <span data-testid={testIds.appConfig.agentExposed(agent.name)}>{exposure(agent)}</span>
          </Stack>
        )}
        <SwitchProblem state={config} />
        {(agent.error || agent.configError) && (
          <div data-testid={testIds.appConfig.agentError(agent.name)}>
            <Alert severity="error" title={t('agents.unreachable', 'The agent did not answer')}>
              {agent.error || agent.configError}
            </Alert>
          </div>
        )}
        {rowError && (
          <Alert severity="error" title={t('profiler-configs.switching-failed.title', 'Switching failed')}>
            {rowError}
          </Alert>
        )}
        {!agent.error && <Symbols name={agent.name} />}
        {list.canProfile && !agent.error && agent.profile?.available && (
          <Profiler
            agent={agent}
            max={Math.min(list.maxProfileSeconds, agent.profile.maxSeconds)}
            onChanged={onChanged}
          />
        )}
      </Stack>
    </div>
  );
}

function exposure(a: AgentState): string {
  if (!a.metricsUrl) {
    return t('profiler-configs.exposure.no-url', 'No metrics URL set: exposure not checked.');
  }
  if (a.exposed === true) {
    return tf('agents.exposure.exposed', 'vllm_profiling_* exposed ({{families}} families).', {
      families: a.profilingFamilies ?? 0,
    });
  }
  if (a.exposed === false) {
    return t('agents.exposure.not-exposed', 'vllm_profiling_* not exposed.');
  }
  return tf('agents.exposure.unknown', 'Exposure unknown: {{error}}', { error: a.exposedError ?? '' });
}

type SymbolsLoad =
  | { state: 'idle' }
  | { state: 'loading' }
  | { state: 'error'; message: string }
  | { state: 'ok'; report: SymbolsReport };

/** Symbols checks the deployment's service_metrics_symbols.yaml on demand: it reads vLLM's /metrics each time. */
function Symbols({ name }: { name: string }) {
  const [load, setLoad] = useState<SymbolsLoad>({ state: 'idle' });
  const check = async () => {
    setLoad({ state: 'loading' });
    try {
      setLoad({ state: 'ok', report: await agentSymbols(name) });
    } catch (err: unknown) {
      setLoad({ state: 'error', message: errorMessage(err) });
    }
  };
  return (
    <Stack direction="column" gap={1}>
      <div>
        <Button
          variant="secondary"
          size="sm"
          icon="check-square"
          onClick={check}
          disabled={load.state === 'loading'}
          data-testid={testIds.appConfig.agentSymbolsCheck(name)}
        >
          {t('agents.symbols.check', 'Check the symbols file')}
        </Button>
      </div>
      {load.state === 'error' && (
        <Alert severity="error" title={t('agents.symbols.failed', 'Could not check the symbols file')}>
          {load.message}
        </Alert>
      )}
      {load.state === 'ok' && <SymbolsTable report={load.report} testId={testIds.appConfig.agentSymbols(name)} />}
    </Stack>
  );
}

function SymbolsTable({ report, testId }: { report: SymbolsReport; testId: string }) {
  if (!report.exists) {
    return (
      <div data-testid={testId}>
        {tf('agents.symbols.none', 'No symbols file at {{path}}: the profiler records its built-in metrics only.', {
          path: report.path,
        })}
      </div>
    );
  }
  const problemsOf = (i: number) => report.problems.filter((p) => p.entry === i);
  return (
    <div data-testid={testId}>
      <Stack direction="column" gap={1}>
        <span>
          {tf('agents.symbols.summary', '{{path}} — vLLM {{version}}; changes take effect when vLLM restarts.', {
            path: report.path,
            version: report.vllmVersion || t('agents.symbols.version-unknown', 'version unknown'),
          })}
        </span>
        {report.error && (
          <Alert severity="error" title={t('agents.symbols.unreadable', 'The file cannot be used')}>
            {report.error}
          </Alert>
        )}
        {(report.versionError || report.metricsError) && (
          <Alert severity="warning" title={t('agents.symbols.partial', 'Checked without everything')}>
            {[report.versionError, report.metricsError].filter(Boolean).join(' ')}
          </Alert>
        )}
        {report.entries.length > 0 && (
          <table className="filter-table">
            <thead>
              <tr>
                <th>{t('agents.symbols.line', 'Line')}</th>
                <th>{t('agents.symbols.symbol', 'Symbol')}</th>
                <th>{t('agents.symbols.versions', 'vLLM versions')}</th>
                <th>{t('agents.symbols.metrics', 'Metrics')}</th>
                <th>{t('agents.symbols.problems', 'Problems')}</th>
              </tr>
            </thead>
            <tbody>
              {report.entries.map((e, i) => (
                <tr key={i}>
                  <td>{e.line}</td>
                  <td>
                    <code>{e.symbol}</code>
                  </td>
                  <td>{`${e.minVersion ?? ''} – ${e.maxVersion ?? ''}`}</td>
                  <td>
                    {(e.metrics ?? []).map((m) => {
                      const seen = report.exposed?.[PROFILING_PREFIX + m.name];
                      return (
                        <div key={m.name}>
                          <code>{m.name}</code> ({m.type})
                          {seen !== undefined && (
                            <Badge
                              color={seen ? 'green' : 'orange'}
                              text={
                                seen
                                  ? t('agents.symbols.on-metrics', 'on /metrics')
                                  : t('agents.symbols.not-on-metrics', 'not on /metrics')
                              }
                            />
                          )}
                        </div>
                      );
                    })}
                  </td>
                  <td>
                    {problemsOf(i).map((p, j) => (
                      <div key={j}>
                        <Badge
                          color={p.severity === 'error' ? 'red' : 'orange'}
                          text={
                            p.severity === 'error'
                              ? t('agents.symbols.error', 'error')
                              : t('agents.symbols.warning', 'warning')
                          }
                        />{' '}
                        {p.message}
                      </div>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Stack>
    </div>
  );
}

interface ProfilerProps {
  agent: AgentState;
  max: number;
  onChanged: () => void;
}

/** Profiler starts and stops torch profiles (Admins) and lists the traces with download links. */
function Profiler({ agent, max, onChanged }: ProfilerProps) {
  const [seconds, setSeconds] = useState(Math.min(30, max));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [traces, setTraces] = useState<TraceList | undefined>();
  const status = agent.profile;
  const run = async (f: () => Promise<unknown>, changes = true) => {
    setBusy(true);
    setError('');
    try {
      await f();
      if (changes) {
        onChanged();
      }
    } catch (err: unknown) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const valid = Number.isInteger(seconds) && seconds >= 1 && seconds <= max;
  return (
    <div data-testid={testIds.appConfig.agentProfiler(agent.name)}>
      <Stack direction="column" gap={1}>
        <Stack direction="row" gap={1} alignItems="flex-end" wrap="wrap">
          <Field
            label={t('agents.profile.seconds', 'Torch profile length (seconds)')}
            invalid={!valid}
            error={tf('agents.profile.bounds', 'Between 1 and {{max}}', { max })}
          >
            <Input
              id={`inferscope-agent-profile-seconds-${agent.name}`}
              type="number"
              width={12}
              value={seconds}
              onChange={(e) => setSeconds(Number(e.currentTarget.value))}
            />
          </Field>
          <Field label="">
            <Button
              icon="play"
              disabled={busy || !valid || !!status?.running}
              onClick={() => run(() => startProfile(agent.name, seconds))}
              data-testid={testIds.appConfig.agentProfileStart(agent.name)}
            >
              {tf('agents.profile.start', 'Profile for {{n}} s', { n: seconds })}
            </Button>
          </Field>
          {status?.running && (
            <Field label="">
              <Button
                variant="secondary"
                icon="square-shape"
                disabled={busy}
                onClick={() => run(() => stopProfile(agent.name))}
              >
                {t('agents.profile.stop', 'Stop now')}
              </Button>
            </Field>
          )}
          <Field label="">
            <Button
              variant="secondary"
              icon="list-ul"
              onClick={() => run(async () => setTraces(await listTraces(agent.name)), false)}
              data-testid={testIds.appConfig.agentTraces(agent.name)}
            >
              {t('agents.profile.traces', 'List traces')}
            </Button>
          </Field>
        </Stack>
        {status?.running && (
          <span>
            {tf(
              'agents.profile.running',
              'Profiling since {{from}}, started by {{by}}; the agent stops it at {{until}}.',
              {
                from: status.startedAt ? dateTimeFormat(status.startedAt) : '',
                by: status.startedBy ?? '',
                until: status.endsAt ? dateTimeFormat(status.endsAt) : '',
              }
            )}
          </span>
        )}
        {(error || status?.lastError) && (
          <Alert severity="error" title={t('agents.profile.failed', 'Torch profiler')}>
            {error || status?.lastError}
          </Alert>
        )}
        {traces && (
          <ul data-testid={testIds.appConfig.agentTraceList(agent.name)}>
            {traces.traces.map((tr) => (
              <li key={tr.name}>
                {tr.size <= traces.maxBytes ? (
                  // A plain link: the browser downloads through the app backend with the user's session.
                  <a href={traceUrl(agent.name, tr.name)} download={tr.name}>
                    {tr.name}
                  </a>
                ) : (
                  <code>{tr.name}</code>
                )}{' '}
                {tf('agents.profile.trace-size', '{{mb}} MB, {{when}}', {
                  mb: (tr.size / 1048576).toFixed(1),
                  when: dateTimeFormat(tr.modified),
                })}
                {tr.size > traces.maxBytes &&
                  ' ' +
                    tf('agents.profile.too-big', 'over the download limit: copy it from {{dir}} on the host', {
                      dir: traces.dir,
                    })}
              </li>
            ))}
          </ul>
        )}
      </Stack>
    </div>
  );
}
