import React, { useCallback, useEffect, useState } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../i18n';
import { dateTimeFormat } from '@grafana/data';
import { Alert, Badge, Button, Field, LoadingPlaceholder, Stack, Switch } from '@grafana/ui';
import { errorMessage } from '../useBackendStatus';
import { testIds } from '../testIds';
import { listProfilerConfigs, ProfilerConfigState, setMetricEnable } from './profilerApi';

type Load = { state: 'loading' } | { state: 'error'; message: string } | { state: 'ok'; files: ProfilerConfigState[] };

interface Props {
  /** canWrite enables the switches (the backend enforces the same rule); unset, the backend's answer decides. */
  canWrite?: boolean;
  /** reloadKey changes after the allow-list is saved, to read the new list. */
  reloadKey?: number;
  /** metricsUrl, when set, shows only the files of the deployment with that /metrics URL (an endpoint's page). */
  metricsUrl?: string;
}

/** sameMetricsUrl compares two /metrics URLs, with or without the path and a trailing slash. */
export function sameMetricsUrl(a: string, b: string): boolean {
  const norm = (u: string) =>
    u
      .trim()
      .replace(/\/+$/, '')
      .replace(/\/metrics$/, '');
  return norm(a) === norm(b);
}

/** ProfilerConfigs shows each allow-listed profiler config file as it is on disk and switches metric_enable. */
export function ProfilerConfigs({ canWrite: canWriteProp, reloadKey = 0, metricsUrl }: Props) {
  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const [backendCanWrite, setBackendCanWrite] = useState(false);
  const canWrite = canWriteProp ?? backendCanWrite;
  const [pending, setPending] = useState<Record<string, boolean>>({});
  const [toggleErrors, setToggleErrors] = useState<Record<string, string>>({});

  const refresh = useCallback(() => {
    let cancelled = false;
    setLoad({ state: 'loading' });
    listProfilerConfigs()
      .then((list) => {
        if (!cancelled) {
          setBackendCanWrite(list.canWrite);
          const files = list.profilerConfigs.filter(
            (f) => metricsUrl === undefined || (!!f.metricsUrl && sameMetricsUrl(f.metricsUrl, metricsUrl))
          );
          setLoad({ state: 'ok', files });
        }
      })
      .catch((err: unknown) => !cancelled && setLoad({ state: 'error', message: errorMessage(err) }));
    return () => {
      cancelled = true;
    };
  }, [metricsUrl]);
  useEffect(() => refresh(), [refresh, reloadKey]);

  const toggle = async (file: ProfilerConfigState) => {
    const value = file.metricEnable === 1 ? 0 : 1;
    setPending((p) => ({ ...p, [file.name]: true }));
    setToggleErrors((e) => ({ ...e, [file.name]: '' }));
    try {
      const next = await setMetricEnable(file.name, value);
      // The deployment reloads the file on its own poll, so the old exposure is kept until the next refresh.
      setLoad((l) =>
        l.state === 'ok'
          ? {
              ...l,
              files: l.files.map((f) =>
                f.name === file.name
                  ? {
                      ...next,
                      exposed: f.exposed,
                      profilingFamilies: f.profilingFamilies,
                      exposedError: f.exposedError,
                    }
                  : f
              ),
            }
          : l
      );
    } catch (err: unknown) {
      setToggleErrors((e) => ({ ...e, [file.name]: errorMessage(err) }));
    } finally {
      setPending((p) => ({ ...p, [file.name]: false }));
    }
  };

  // On an endpoint's page a deployment without an allow-listed file may have an agent, which shows itself.
  if (metricsUrl !== undefined && load.state === 'ok' && load.files.length === 0) {
    return null;
  }
  return (
    <div data-testid={testIds.appConfig.profilerConfigs}>
      <Stack direction="column" gap={2}>
        <Stack direction="row" justifyContent="space-between" alignItems="center">
          <h3>{t('profiler-configs.heading', 'Ascend profiler metric collection')}</h3>
          <Button variant="secondary" icon="sync" size="sm" onClick={refresh} disabled={load.state === 'loading'}>
            {t('profiler-configs.refresh', 'Refresh')}
          </Button>
        </Stack>
        {!canWrite && (
          <div data-testid={testIds.appConfig.readOnly}>
            <Alert severity="info" title={t('profiler-configs.read-only.title', 'Read-only')}>
              {t(
                'profiler-configs.only-admins-and-editors-if',
                'Only Admins (and Editors, if the app allows it) can switch metric collection.'
              )}
            </Alert>
          </div>
        )}
        {load.state === 'loading' && (
          <div data-testid={testIds.appConfig.profilerLoading}>
            <LoadingPlaceholder
              text={t('profiler-configs.reading-profiler-config-files.text', 'Reading profiler config files…')}
            />
          </div>
        )}
        {load.state === 'error' && (
          <div data-testid={testIds.appConfig.profilerError}>
            <Alert
              severity="error"
              title={t(
                'profiler-configs.could-not-read-the-profiler.title',
                'Could not read the profiler config files'
              )}
            >
              {load.message}
            </Alert>
          </div>
        )}
        {load.state === 'ok' && load.files.length === 0 && (
          <Alert
            severity="info"
            title={t('profiler-configs.no-profiler-config-files-allow.title', 'No profiler config files allow-listed')}
          >
            {t(
              'profiler-configs.add-the-ms-service-profiler',
              'Add the ms_service_profiler_config.json of each vLLM-Ascend deployment below to switch its metric collection here.'
            )}
          </Alert>
        )}
        {load.state === 'ok' &&
          load.files.map((f) => (
            <FileRow
              key={f.name}
              file={f}
              canWrite={canWrite}
              pending={!!pending[f.name]}
              toggleError={toggleErrors[f.name]}
              onToggle={() => toggle(f)}
            />
          ))}
      </Stack>
    </div>
  );
}

interface RowProps {
  file: ProfilerConfigState;
  canWrite: boolean;
  pending: boolean;
  toggleError?: string;
  onToggle: () => void;
}

function FileRow({ file, canWrite, pending, toggleError, onToggle }: RowProps) {
  const id = `inferscope-metric-enable-${file.name}`;
  return (
    <div data-testid={testIds.appConfig.profilerRow(file.name)}>
      <Stack direction="column" gap={1}>
        <Field
          label={tf('profiler-configs.switch', '{{name}}: metric collection (metric_enable)', { name: file.name })}
          description={file.path}
        >
          <Switch
            id={id}
            value={file.metricEnable === 1}
            disabled={!canWrite || pending || !!file.error}
            onChange={onToggle}
            data-testid={testIds.appConfig.metricEnable(file.name)}
          />
        </Field>
        <Stack direction="row" gap={1} wrap="wrap">
          {pending && <Badge color="blue" text={t('profiler-configs.saving.text', 'Saving…')} icon="fa fa-spinner" />}
          <SwitchState state={file} />
          <span data-testid={testIds.appConfig.exposed(file.name)}>{exposureText(file)}</span>
        </Stack>
        <SwitchProblem state={file} />
        {file.error && (
          <Alert severity="error" title={t('profiler-configs.cannot-read-this-file.title', 'Cannot read this file')}>
            {file.error}
          </Alert>
        )}
        {toggleError && (
          <div data-testid={testIds.appConfig.toggleError(file.name)}>
            <Alert severity="error" title={t('profiler-configs.switching-failed.title', 'Switching failed')}>
              {toggleError}
            </Alert>
          </div>
        )}
      </Stack>
    </div>
  );
}

/** SwitchFileState is what a profiler config file says, read by the app (shared-file mode) or by an agent. */
export interface SwitchFileState {
  exists: boolean;
  metricEnable: 0 | 1;
  enable: 0 | 1;
  modified?: string;
  problem?: string;
}

/** SwitchState shows a profiler config's metric_enable and enable and when the file last changed. */
export function SwitchState({ state }: { state: SwitchFileState }) {
  return (
    <>
      <Badge
        color={state.metricEnable === 1 ? 'green' : 'darkgrey'}
        // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- the file's key and value, as written in it
        text={`metric_enable: ${state.metricEnable}`}
      />
      <Badge
        color={state.enable === 1 ? 'green' : 'darkgrey'}
        text={tf('profiler-configs.enable-badge', 'enable (tracing): {{value}}', { value: state.enable })}
      />
      <span>
        {state.exists
          ? tf('profiler-configs.last-change', 'Last change: {{when}}', {
              when: state.modified ? dateTimeFormat(state.modified) : t('profiler-configs.unknown', 'unknown'),
            })
          : t(
              'profiler-configs.missing',
              'File does not exist yet: the profiler treats that as off; switching creates it.'
            )}
      </span>
    </>
  );
}

/** SwitchProblem warns when the file holds a value the profiler reads differently from how it looks. */
export function SwitchProblem({ state }: { state?: SwitchFileState }) {
  if (!state?.problem) {
    return null;
  }
  return (
    <Alert severity="warning" title={t('profiler-configs.unexpected-value.title', 'Unexpected value')}>
      {state.problem}
    </Alert>
  );
}

function exposureText(f: ProfilerConfigState): string {
  if (!f.metricsUrl) {
    return t('profiler-configs.exposure.no-url', 'No metrics URL set: exposure not checked.');
  }
  if (f.exposed === true) {
    return tf('profiler-configs.exposure.exposed', 'vllm_profiling_* exposed at {{url}} ({{families}} families).', {
      url: f.metricsUrl,
      families: f.profilingFamilies ?? 0,
    });
  }
  if (f.exposed === false) {
    return tf('profiler-configs.exposure.not-exposed', 'vllm_profiling_* not exposed at {{url}}.', {
      url: f.metricsUrl,
    });
  }
  return f.exposedError
    ? tf('profiler-configs.exposure.unknown', 'Exposure unknown: {{error}}', { error: f.exposedError })
    : t('profiler-configs.exposure.stale', 'Exposure not checked since the last change; Refresh to re-check.');
}
