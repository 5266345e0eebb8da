import React from 'react';
import { AppPluginMeta, PluginConfigPageProps, PluginMeta } from '@grafana/data';
import { Alert, Stack } from '@grafana/ui';
import { BackendStatusAlert } from '../BackendStatusAlert';
import { testIds } from '../testIds';

/** AppSettings is the app's jsonData; fields arrive with the Ascend profiler switch. */
export type AppSettings = Record<string, never>;

export interface AppConfigProps extends PluginConfigPageProps<AppPluginMeta<AppSettings>> {}

/** AppConfig is the app's configuration page. */
const AppConfig = ({ plugin }: AppConfigProps) => {
  const meta: PluginMeta = plugin.meta;
  return (
    <div data-testid={testIds.appConfig.container}>
      <Stack direction="column" gap={2}>
        {!meta.enabled && (
          <Alert severity="info" title="App disabled">
            Enable the app to use its dashboards and backend.
          </Alert>
        )}
        <BackendStatusAlert />
        <div data-testid={testIds.appConfig.profilerNotice}>
          <Alert severity="info" title="Ascend profiler switch not available yet">
            Switching vLLM-Ascend&apos;s metric collection (metric_enable in ms_service_profiler_config.json) from
            this page is not implemented in this version. Until it is, edit the file on the inference host.
          </Alert>
        </div>
      </Stack>
    </div>
  );
};

export default AppConfig;
