import React, { useMemo } from 'react';
import { css } from '@emotion/css';
import { DataFrame, FieldType, GrafanaTheme2 } from '@grafana/data';
import { t } from '@grafana/i18n';
import { SceneComponentProps, SceneFlexItem, SceneObjectBase, SceneObjectState, sceneGraph } from '@grafana/scenes';
import { Badge, BadgeColor, Stack, Text, useStyles2 } from '@grafana/ui';
import { ENGINE_STATE, FAMILY, GROUP_BY, MEASURE, QUERY_TYPE, RAW_METRIC } from '../../datasource/catalog.gen';
import type { VllmQuery } from '../../datasource/types';
import { testIds } from '../../components/testIds';

// The service status strip of the fleet page: per model, whether it serves (online, sleeping, down) and how well —
// median TTFT, a request's output speed, success rate and requests per minute — as the vLLM service-status
// dashboard's strip shows it. Its targets ride in the fleet page's one query runner (one QueryData round trip per
// refresh); the table's join ignores their refIds.

/** STATUS_REFS name the strip's targets; joinStatus reads each by refId. */
export const STATUS_REFS = {
  state: 'status_state',
  up: 'status_up',
  ttft: 'status_ttft',
  itl: 'status_itl',
  errors: 'status_errors',
  requests: 'status_requests',
} as const;

/** statusTargets are the strip's queries: states per endpoint (a model is online when any endpoint is), the rest per model. */
export function statusTargets(): Array<VllmQuery & { refId: string }> {
  const model = { groupBy: GROUP_BY.model };
  return [
    { refId: STATUS_REFS.state, queryType: QUERY_TYPE.engine_state, groupBy: GROUP_BY.endpoint },
    { refId: STATUS_REFS.up, queryType: QUERY_TYPE.raw, metric: RAW_METRIC.up },
    {
      refId: STATUS_REFS.ttft,
      queryType: QUERY_TYPE.latency,
      metric: FAMILY.ttft,
      quantiles: [0.5],
      window: '5m',
      ...model,
    },
    {
      refId: STATUS_REFS.itl,
      queryType: QUERY_TYPE.latency,
      metric: FAMILY.itl,
      quantiles: [0.5],
      window: '5m',
      ...model,
    },
    {
      refId: STATUS_REFS.errors,
      queryType: QUERY_TYPE.throughput,
      measure: MEASURE.throughput.errors,
      window: '5m',
      ...model,
    },
    {
      refId: STATUS_REFS.requests,
      queryType: QUERY_TYPE.throughput,
      measure: MEASURE.throughput.requests,
      window: '5m',
      ...model,
    },
  ];
}

/** ServiceState is a model's service state: online when any of its engines serves. */
export type ServiceState = 'online' | 'sleeping' | 'unhealthy' | 'down';

/** ModelStatus is one model's card; numbers are the newest values, undefined where nothing answered. */
export interface ModelStatus {
  model: string;
  state: ServiceState;
  /** ttft is the median time to first token, in seconds. */
  ttft?: number;
  /** outputSpeed is a request's output speed in tokens per second: 1 ÷ the median inter-token latency. */
  outputSpeed?: number;
  /** success is the share of finished requests that ended neither in error nor aborted. */
  success?: number;
  /** perMinute is finished requests per minute, every finish reason summed. */
  perMinute?: number;
}

function last(frame: DataFrame): { v?: number; name: string; labels: Record<string, string> } {
  const f = frame.fields.find((x) => x.type === FieldType.number);
  if (!f) {
    return { name: '', labels: {} };
  }
  for (let i = f.values.length - 1; i >= 0; i--) {
    const v = f.values[i];
    if (typeof v === 'number' && !Number.isNaN(v)) {
      return { v, name: f.name, labels: f.labels ?? {} };
    }
  }
  return { name: f.name, labels: f.labels ?? {} };
}

// Best state first: a model serves while any engine does.
const BEST: ServiceState[] = ['online', 'sleeping', 'unhealthy', 'down'];
const CODES: Record<number, ServiceState> = {
  [ENGINE_STATE.online]: 'online',
  [ENGINE_STATE.asleep]: 'sleeping',
  [ENGINE_STATE.unhealthy]: 'unhealthy',
};

/**
 * joinStatus turns the strip's frames into one card per model, sorted worst state first. A model whose endpoints
 * all fail their scrapes is down; one that reports no engine state (V0) but answers is online.
 */
export function joinStatus(frames: DataFrame[]): ModelStatus[] {
  const states = new Map<string, ServiceState>();
  const up = new Map<string, boolean>();
  const rows = new Map<string, ModelStatus>();
  const row = (model: string) => {
    let r = rows.get(model);
    if (!r) {
      r = { model, state: 'down' };
      rows.set(model, r);
    }
    return r;
  };
  for (const frame of frames) {
    const { v, name, labels } = last(frame);
    const model = labels.model_name;
    if (!model) {
      continue;
    }
    const r = row(model);
    switch (frame.refId) {
      case STATUS_REFS.state: {
        const s = v === undefined ? undefined : CODES[Math.round(v)];
        const prev = states.get(model);
        if (s && (!prev || BEST.indexOf(s) < BEST.indexOf(prev))) {
          states.set(model, s);
        }
        break;
      }
      case STATUS_REFS.up:
        up.set(model, (up.get(model) ?? false) || v === 1);
        break;
      case STATUS_REFS.ttft:
        r.ttft = v;
        break;
      case STATUS_REFS.itl:
        r.outputSpeed = v && v > 0 ? 1 / v : undefined;
        break;
      case STATUS_REFS.errors:
        if (name === 'failed_request_ratio' && v !== undefined) {
          r.success = 1 - v;
        }
        break;
      case STATUS_REFS.requests:
        if (v !== undefined) {
          r.perMinute = (r.perMinute ?? 0) + v * 60;
        }
        break;
    }
  }
  for (const r of rows.values()) {
    const s = states.get(r.model);
    r.state = s ?? (up.get(r.model) === false ? 'down' : up.has(r.model) || r.ttft !== undefined ? 'online' : 'down');
  }
  return [...rows.values()].sort(
    (a, b) => BEST.indexOf(b.state) - BEST.indexOf(a.state) || a.model.localeCompare(b.model)
  );
}

const COLORS: Record<ServiceState, BadgeColor> = {
  online: 'green',
  sleeping: 'blue',
  unhealthy: 'orange',
  down: 'red',
};

function stateText(s: ServiceState): string {
  switch (s) {
    case 'online':
      return t('scenes.status.online', 'online');
    case 'sleeping':
      return t('scenes.status.sleeping', 'sleeping');
    case 'unhealthy':
      return t('scenes.status.unhealthy', 'unhealthy');
    default:
      return t('scenes.status.down', 'down');
  }
}

function num(v: number | undefined, digits: number, scale = 1, suffix = ''): string {
  return v === undefined ? '–' : `${(v * scale).toFixed(digits)}${suffix}`;
}

/** ServiceStatusStrip shows a card per model: its state and how it serves. */
export class ServiceStatusStrip extends SceneObjectBase<SceneObjectState> {
  static Component = ServiceStatusRenderer;
}

function Figure({ label, value }: { label: string; value: string }) {
  const styles = useStyles2(getStyles);
  return (
    <div className={styles.figure}>
      <Text variant="h4">{value}</Text>
      <Text variant="bodySmall" color="secondary">
        {label}
      </Text>
    </div>
  );
}

function ServiceStatusRenderer({ model }: SceneComponentProps<ServiceStatusStrip>) {
  const { data } = sceneGraph.getData(model).useState();
  const styles = useStyles2(getStyles);
  const cards = useMemo(() => joinStatus(data?.series ?? []), [data]);
  if (cards.length === 0) {
    return null;
  }
  return (
    <div className={styles.strip} data-testid={testIds.status.strip}>
      {cards.map((c) => (
        <div key={c.model} className={styles.card} data-testid={testIds.status.card(c.model)}>
          <Stack direction="row" gap={1} alignItems="center" justifyContent="space-between">
            <Text weight="medium" truncate>
              {c.model}
            </Text>
            <Badge text={stateText(c.state)} color={COLORS[c.state]} />
          </Stack>
          <div className={styles.figures}>
            <Figure label={t('scenes.status.ttft', 'median TTFT')} value={num(c.ttft, 0, 1000, ' ms')} />
            <Figure label={t('scenes.status.speed', 'output tok/s per request')} value={num(c.outputSpeed, 0)} />
            <Figure label={t('scenes.status.success', 'success rate')} value={num(c.success, 1, 100, ' %')} />
            <Figure label={t('scenes.status.rpm', 'requests/min')} value={num(c.perMinute, 0)} />
          </div>
        </div>
      ))}
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  strip: css({ display: 'flex', flexWrap: 'wrap', gap: theme.spacing(1), width: '100%' }),
  card: css({
    display: 'flex',
    flexDirection: 'column',
    gap: theme.spacing(1),
    padding: theme.spacing(1.5),
    minWidth: 320,
    flex: '1 1 320px',
    maxWidth: 480,
    background: theme.colors.background.secondary,
    border: `1px solid ${theme.colors.border.weak}`,
    borderRadius: theme.shape.radius.default,
  }),
  figures: css({ display: 'grid', gridTemplateColumns: 'repeat(4, 1fr)', gap: theme.spacing(1) }),
  figure: css({ display: 'flex', flexDirection: 'column' }),
});

/** serviceStatusItem is the strip as a fleet-page item; it reads the page's query runner, which carries statusTargets. */
export function serviceStatusItem(): SceneFlexItem {
  return new SceneFlexItem({ body: new ServiceStatusStrip({}) });
}
