import React, { useMemo } from 'react';
import { css } from '@emotion/css';
import { GrafanaTheme2, dateTimeFormat, locationUtil } from '@grafana/data';
import { t } from '@grafana/i18n';
import { tf } from '../../i18n';
import {
  EmbeddedScene,
  SceneComponentProps,
  SceneFlexItem,
  SceneFlexLayout,
  SceneObjectBase,
  SceneObjectState,
  SceneObjectUrlSyncConfig,
  SceneObjectUrlValues,
  VariableDependencyConfig,
  sceneGraph,
} from '@grafana/scenes';
import {
  Badge,
  BadgeColor,
  Input,
  InteractiveTable,
  Sparkline,
  Stack,
  Text,
  TextLink,
  useStyles2,
  useTheme2,
  type CellProps,
  type Column,
  type SortByFn,
} from '@grafana/ui';
import type { EndpointStatus } from '../../datasource/types';
import { STATE_ORDER, joinFleet, type FleetRow, type State } from './join';
import { DS_VARIABLE, fleetTargets } from './queries';
import { ROUTES, fetchEndpoints, navigate, queryRunner, sceneState, selectedUid, withAppState } from './shared';
import { testIds } from '../../components/testIds';
import { serviceStatusItem, statusTargets } from './status';

type Key = 'endpoint' | 'model';

interface FleetTableState extends SceneObjectState {
  /** by says whether rows are endpoints or models. */
  by: Key;
  /** filter is a regular expression (or plain text) over row names, kept in the URL. */
  filter: string;
  /** endpoints is the data source's endpoints resource: flavors and Ascend profiler state where known. */
  endpoints?: EndpointStatus[];
}

/** FleetTable shows the fleet query's series joined into one row per endpoint or model, each linking to its page. */
export class FleetTable extends SceneObjectBase<FleetTableState> {
  protected _urlSync = new SceneObjectUrlSyncConfig(this, { keys: ['filter'] });
  protected _variableDependency = new VariableDependencyConfig(this, {
    variableNames: [DS_VARIABLE],
    onReferencedVariableValueChanged: () => this.loadEndpoints(),
  });

  constructor(state: Omit<FleetTableState, 'filter'> & { filter?: string }) {
    super({ filter: '', ...state });
    this.addActivationHandler(() => {
      this.loadEndpoints();
      // Read again on the next visit: endpoints come and go, and their flavors with them.
      return () => {
        this.loadedUid = undefined;
      };
    });
  }

  getUrlState() {
    return { filter: this.state.filter || undefined };
  }

  updateFromUrl(values: SceneObjectUrlValues) {
    const filter = typeof values.filter === 'string' ? values.filter : '';
    if (filter !== this.state.filter) {
      this.setState({ filter });
    }
  }

  private loadedUid?: string;

  /** loadEndpoints asks the selected data source which endpoints it has (flavor, profiler), once per selection. */
  async loadEndpoints() {
    const uid = selectedUid(this);
    // Activation and the variable's first value both ask; the resource is read once per data source.
    if (!uid || uid === this.loadedUid) {
      return;
    }
    this.loadedUid = uid;
    // Without the resource the table still shows what the queries answer; flavors stay unknown.
    this.setState({ endpoints: await fetchEndpoints(uid).catch(() => []) });
  }

  static Component = FleetTableRenderer;
}

function matches(filter: string, name: string): boolean {
  if (!filter) {
    return true;
  }
  try {
    return new RegExp(filter, 'i').test(name);
  } catch {
    return name.toLowerCase().includes(filter.toLowerCase());
  }
}

/**
 * Row is a table row: the joined values and, for endpoints, what the endpoints resource says — including, for a
 * discovered endpoint, the role its labels give (llm-d.ai/role), the source that found it, and since when it is gone.
 */
type Row = FleetRow & {
  flavor?: string;
  version?: string;
  profiler?: boolean;
  role?: string;
  source?: string;
  goneSince?: string;
};

// Missing values sort below every number, whichever the direction.
const byNumber =
  (get: (r: Row) => number | undefined): SortByFn<Row> =>
  (a, b) =>
    (get(a.original) ?? -Infinity) - (get(b.original) ?? -Infinity);

const STATE_COLORS: Record<State, BadgeColor> = {
  up: 'green',
  sleeping: 'blue',
  unhealthy: 'orange',
  down: 'red',
  gone: 'purple',
  unknown: 'darkgrey',
};

function stateText(s: State): string {
  switch (s) {
    case 'up':
      return t('scenes.state.up', 'up');
    case 'sleeping':
      return t('scenes.state.sleeping', 'sleeping');
    case 'unhealthy':
      return t('scenes.state.unhealthy', 'unhealthy');
    case 'down':
      return t('scenes.state.down', 'down');
    case 'gone':
      return t('scenes.state.gone', 'gone');
    default:
      return t('scenes.state.unknown', 'unknown');
  }
}

function fmt(v: number | undefined, digits = 1, suffix = ''): string {
  return v === undefined ? '–' : `${v.toFixed(digits)}${suffix}`;
}

function Trend({ row, which }: { row: Row; which: 'kvTrend' | 'generationTrend' }) {
  const theme = useTheme2();
  const sparkline = row[which];
  if (!sparkline || sparkline.y.values.length < 2) {
    return null;
  }
  return <Sparkline width={80} height={20} sparkline={sparkline} theme={theme} />;
}

/** columns are the table's columns; the role column only when some endpoint's labels give a role (discovery). */
function columns(by: Key, roles: boolean): Array<Column<Row>> {
  const num = (
    id: keyof Row,
    header: string,
    cell: (r: Row) => React.ReactNode,
    get: (r: Row) => number | undefined
  ) => ({
    id,
    header,
    cell: ({ row }: CellProps<Row>) => cell(row.original),
    sortType: byNumber(get),
  });
  const link = by === 'endpoint' ? ROUTES.endpoint : ROUTES.model;
  return [
    {
      id: 'name',
      header: by === 'endpoint' ? t('scenes.column.endpoint', 'Endpoint') : t('scenes.column.model', 'Model'),
      sortType: 'alphanumeric',
      cell: ({ row }: CellProps<Row>) => (
        <TextLink
          href={locationUtil.assureBaseUrl(withAppState(link(row.original.name)))}
          inline={false}
          data-testid={testIds.fleet.link(row.original.name)}
          onClick={(e) => {
            // Grafana's router, not a page load: the scenes keep their state and the URL keeps the view.
            e.preventDefault();
            navigate(link(row.original.name));
          }}
        >
          {row.original.name}
        </TextLink>
      ),
    },
    by === 'endpoint'
      ? {
          id: 'flavor',
          header: t('scenes.column.flavor', 'Flavor'),
          sortType: 'alphanumeric',
          // The release where the endpoint's /version said (direct mode): "vllm-v1 0.13.0".
          cell: ({ row }: CellProps<Row>) =>
            row.original.flavor ? [row.original.flavor, row.original.version].filter(Boolean).join(' ') : '–',
        }
      : num(
          'related',
          t('scenes.column.endpoints', 'Endpoints'),
          (r) => r.related.length,
          (r) => r.related.length
        ),
    num(
      'engines',
      t('scenes.column.engines', 'Engines / DP ranks'),
      (r) => r.engines || '–',
      (r) => r.engines
    ),
    {
      id: 'state',
      header: t('scenes.column.state', 'State'),
      sortType: (a, b) => STATE_ORDER.indexOf(a.original.state) - STATE_ORDER.indexOf(b.original.state),
      cell: ({ row }: CellProps<Row>) => (
        <Badge
          text={stateText(row.original.state)}
          color={STATE_COLORS[row.original.state]}
          tooltip={
            row.original.goneSince
              ? tf('scenes.state.gone-since', 'Discovery no longer lists it since {{time}}; its history is kept', {
                  time: dateTimeFormat(row.original.goneSince),
                })
              : undefined
          }
        />
      ),
    },
    ...(by === 'endpoint' && roles
      ? [
          {
            id: 'role',
            header: t('scenes.column.role', 'Role (labels)'),
            sortType: 'alphanumeric' as const,
            // The role a discovery source's role label gives (pod labels); the source in the tooltip.
            cell: ({ row }: CellProps<Row>) =>
              row.original.role ? (
                <span
                  title={tf('scenes.role.source', 'From the labels {{source}} found', {
                    source: row.original.source ?? '',
                  })}
                >
                  {row.original.role}
                </span>
              ) : (
                '–'
              ),
          },
        ]
      : []),
    num(
      'kv',
      t('scenes.column.kv', 'KV usage (max rank)'),
      (r) => (
        <Stack gap={1} alignItems="center">
          {fmt(r.kv, 1, ' %')}
          <Trend row={r} which="kvTrend" />
        </Stack>
      ),
      (r) => r.kv
    ),
    num(
      'running',
      t('scenes.column.running', 'Running'),
      (r) => fmt(r.running, 0),
      (r) => r.running
    ),
    num(
      'waiting',
      t('scenes.column.waiting', 'Waiting'),
      (r) => fmt(r.waiting, 0),
      (r) => r.waiting
    ),
    num(
      'ttft',
      t('scenes.column.ttft', 'TTFT p95'),
      (r) => fmt(r.ttft === undefined ? undefined : r.ttft * 1000, 0, ' ms'),
      (r) => r.ttft
    ),
    num(
      'generation',
      t('scenes.column.generation', 'Generated tok/s'),
      (r) => (
        <Stack gap={1} alignItems="center">
          {fmt(r.generation, 0)}
          <Trend row={r} which="generationTrend" />
        </Stack>
      ),
      (r) => r.generation
    ),
    num(
      'imbalance',
      t('scenes.column.imbalance', 'DP imbalance (max/mean)'),
      (r) => fmt(r.imbalance, 2),
      (r) => r.imbalance
    ),
    num(
      'acceptance',
      t('scenes.column.acceptance', 'Spec-decode acceptance'),
      (r) => fmt(r.acceptance === undefined ? undefined : r.acceptance * 100, 0, ' %'),
      (r) => r.acceptance
    ),
    num(
      'findings',
      t('scenes.column.findings', 'Findings'),
      (r) => r.findings,
      (r) => r.findings
    ),
    ...(by === 'endpoint'
      ? [
          {
            id: 'profiler',
            header: t('scenes.column.profiler', 'Ascend profiler'),
            cell: ({ row }: CellProps<Row>) =>
              row.original.flavor !== 'vllm-ascend'
                ? '–'
                : row.original.profiler
                  ? t('scenes.profiler.on', 'metrics on')
                  : t('scenes.profiler.off', 'metrics off'),
          },
        ]
      : []),
  ];
}

function FleetTableRenderer({ model }: SceneComponentProps<FleetTable>) {
  const { by, filter, endpoints } = model.useState();
  const { data } = sceneGraph.getData(model).useState();
  const styles = useStyles2(getStyles);
  const rows = useMemo((): Row[] => {
    const known = by === 'endpoint' ? (endpoints ?? []).map((e) => e.name) : [];
    const status = new Map((endpoints ?? []).map((e) => [e.name, e]));
    return joinFleet(data?.series ?? [], by, known).map((r) => {
      const e = status.get(r.name);
      // A departed endpoint's history still answers (its last values read up), but it is gone, not up or down. In
      // direct mode the endpoints resource knows a failing scrape before any series does.
      const state = e?.gone ? 'gone' : r.state === 'unknown' && e?.up === false ? 'down' : r.state;
      // Prometheus mode lists names only; dp-labelled KV series still tell vLLM-Ascend apart.
      const flavor = e?.detection?.flavor ?? (r.dpRanks ? 'vllm-ascend' : undefined);
      return {
        ...r,
        state,
        flavor,
        version: e?.version,
        profiler: e?.detection?.ascendProfiler,
        role: e?.role,
        source: e?.source,
        goneSince: e?.gone ? e.goneSince : undefined,
      };
    });
  }, [data, by, endpoints]);
  const roles = rows.some((r) => r.role);
  const cols = useMemo(() => columns(by, roles), [by, roles]);
  const shown = rows.filter((r) => matches(filter, r.name));
  return (
    <div className={styles.container} data-testid={testIds.fleet.table(by)}>
      <Stack direction="row" gap={2} alignItems="center">
        <Input
          className={styles.filter}
          value={filter}
          placeholder={
            by === 'endpoint'
              ? t('scenes.filter.endpoints', 'Filter endpoints (regular expression)')
              : t('scenes.filter.models', 'Filter models (regular expression)')
          }
          onChange={(e) => model.setState({ filter: e.currentTarget.value })}
          data-testid={testIds.fleet.filter}
        />
        <span data-testid={testIds.fleet.count}>
          <Text color="secondary">{`${shown.length} / ${rows.length}`}</Text>
        </span>
      </Stack>
      <InteractiveTable columns={cols} data={shown} getRowId={(r: Row) => r.name} pageSize={100} />
    </div>
  );
}

const getStyles = (theme: GrafanaTheme2) => ({
  container: css({ display: 'flex', flexDirection: 'column', gap: theme.spacing(1), width: '100%' }),
  filter: css({ maxWidth: 420 }),
});

/** fleetScene is the fleet page: each model's service status, and one query runner for every endpoint (or model) joined into one table. */
export function fleetScene(by: Key = 'endpoint'): EmbeddedScene {
  return new EmbeddedScene({
    ...sceneState(),
    $data: queryRunner([...fleetTargets(by), ...statusTargets()], 60),
    body: new SceneFlexLayout({
      direction: 'column',
      // The models' service status above the table, from the same round trip.
      children: [serviceStatusItem(), new SceneFlexItem({ body: new FleetTable({ by }) })],
    }),
  });
}
