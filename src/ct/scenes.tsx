import React, { useLayoutEffect, useState } from 'react';
import { Route, Router, Routes } from 'react-router-dom';
import { from, map, type Observable } from 'rxjs';
import {
  type DataFrame,
  DataQueryResponse,
  DataSourceInstanceSettings,
  EventBusSrv,
  FieldColorModeId,
  FieldType,
  LoadingState,
  PanelPlugin,
  PanelProps,
  PanelPluginMeta,
  ScopedVars,
  getFieldDisplayName,
} from '@grafana/data';
import {
  LocationServiceProvider,
  locationService,
  setDataSourceSrv,
  setPluginImportUtils,
  setRunRequest,
  setTemplateSrv,
} from '@grafana/runtime';
import { sceneGraph, type SceneObject } from '@grafana/scenes';
import {
  GraphDrawStyle,
  GraphGradientMode,
  LegendDisplayMode,
  LineInterpolation,
  VisibilityMode,
} from '@grafana/schema';
import { PanelContextProvider, TimeSeries } from '@grafana/ui';
import { DataSource } from '../datasource/datasource';
import type { VllmOptions } from '../datasource/types';

// What Grafana provides the app's Scenes pages at run time, for tests: the data-source service (one InferScope data
// source, the real DataSource class, whose queries go to getBackendSrv), a runRequest that calls the data source
// as Grafana's does, a template service that interpolates scene variables, and panel plugins: Grafana's own
// (timeseries, table) are not packages, so a stand-in lists what each panel received, for the tests to read, and a
// time-series panel also draws its frames with @grafana/ui's TimeSeries, as Grafana's panel does, for screenshots.

/** StandInPanel lists the panel's series by display name (and a table's rows), for tests to read. */
function StandInPanel({ data }: PanelProps) {
  return (
    <ul data-testid="ct-panel-series">
      {data.series.flatMap((frame, i) =>
        frame.fields
          .filter((f) => f.type !== 'time')
          .slice(0, frame.name === 'diagnosis' ? 1 : undefined)
          .map((f, j) => (
            <li key={`${i}-${j}`}>
              {frame.name === 'diagnosis' ? `${frame.length} findings` : getFieldDisplayName(f, frame, data.series)}
            </li>
          ))
      )}
    </ul>
  );
}

/** lineStyle gives a frame's value fields the time-series panel's default line style and classic palette. */
function lineStyle(frame: DataFrame): DataFrame {
  return {
    ...frame,
    fields: frame.fields.map((f) =>
      f.type === FieldType.time
        ? f
        : {
            ...f,
            config: {
              ...f.config,
              color: { mode: FieldColorModeId.PaletteClassic },
              custom: {
                drawStyle: GraphDrawStyle.Line,
                lineInterpolation: LineInterpolation.Smooth,
                lineWidth: 1,
                fillOpacity: 10,
                gradientMode: GraphGradientMode.Opacity,
                showPoints: VisibilityMode.Never,
                spanNulls: true,
                ...f.config.custom,
              },
            },
          }
    ),
  };
}

const eventBus = new EventBusSrv();

/** ChartPanel draws a time-series panel's frames with TimeSeries, keeping the stand-in list (hidden) for tests. */
function ChartPanel(props: PanelProps) {
  const frames = props.data.series.filter((f) => f.fields.some((x) => x.type === FieldType.time)).map(lineStyle);
  if (frames.length === 0) {
    return <StandInPanel {...props} />;
  }
  return (
    <div style={{ position: 'relative' }}>
      <PanelContextProvider value={{ eventsScope: 'global', eventBus }}>
        <TimeSeries
          frames={frames}
          timeRange={props.timeRange}
          timeZone={props.timeZone}
          width={props.width}
          height={props.height}
          legend={{ showLegend: true, displayMode: LegendDisplayMode.List, placement: 'bottom', calcs: [] }}
        />
      </PanelContextProvider>
      <div style={{ position: 'absolute', width: 1, height: 1, overflow: 'hidden', clipPath: 'inset(50%)' }}>
        <StandInPanel {...props} />
      </div>
    </div>
  );
}

const plugins = new Map<string, PanelPlugin>();
let pluginsInstalled = false;

function standIn(id: string): PanelPlugin {
  if (!plugins.has(id)) {
    const plugin = new PanelPlugin(id === 'timeseries' ? ChartPanel : StandInPanel);
    plugin.meta = { id, name: id, info: { version: '' } } as unknown as PanelPluginMeta;
    plugins.set(id, plugin);
  }
  return plugins.get(id)!;
}

/** SETTINGS are the test data source's instance settings. */
export const SETTINGS = {
  id: 1,
  uid: 'vllm',
  type: 'inferscope-vllm-datasource',
  name: 'vLLM',
  access: 'proxy',
  readOnly: false,
  meta: { id: 'inferscope-vllm-datasource', name: 'vLLM (InferScope)', info: { logos: {} } },
  jsonData: { mode: 'direct' },
} as unknown as DataSourceInstanceSettings<VllmOptions>;

/** installScenes sets Grafana's services up for the pages; getBackendSrv must be faked apart. */
export function installScenes(): DataSource {
  const ds = new DataSource(SETTINGS);
  setDataSourceSrv({
    get: async () => ds,
    getInstanceSettings: () => SETTINGS,
    getList: () => [SETTINGS],
    reload: async () => {},
    registerRuntimeDataSource: () => {},
  } as never);
  setRunRequest((api, request) =>
    from(api.query(request) as Observable<DataQueryResponse>).pipe(
      map((r) => ({ state: LoadingState.Done, series: r.data, errors: r.errors, timeRange: request.range }))
    )
  );
  setTemplateSrv({
    replace: (target?: string, scopedVars?: ScopedVars, format?: string | Function) => {
      const scene = (scopedVars?.__sceneObject?.value ?? undefined) as SceneObject | undefined;
      return scene ? sceneGraph.interpolate(scene, target, scopedVars, format as never) : (target ?? '');
    },
    getVariables: () => [],
    containsTemplate: (s?: string) => Boolean(s?.includes('$')),
    updateTimeRange: () => {},
  } as never);
  // Grafana allows this once per page (and Jest module registry).
  if (!pluginsInstalled) {
    setPluginImportUtils({
      importPanelPlugin: async (id: string) => standIn(id),
      getPanelPluginFromCache: (id: string) => standIn(id),
    });
    pluginsInstalled = true;
  }
  return ds;
}

/**
 * LocationRouter routes by Grafana's location service, as Grafana does, so scenes' URL sync and links agree; the
 * children render under /a/<app id>/*, where Grafana mounts an app's root page.
 */
export function LocationRouter({ children }: { children: React.ReactNode }) {
  const history = locationService.getHistory();
  const [location, setLocation] = useState(history.location);
  useLayoutEffect(() => history.listen((l: typeof history.location) => setLocation(l)), [history]);
  return (
    <LocationServiceProvider service={locationService}>
      <Router location={location} navigator={history}>
        <Routes>
          <Route path="/a/inferscope-vllm-app/*" element={children} />
        </Routes>
      </Router>
    </LocationServiceProvider>
  );
}
