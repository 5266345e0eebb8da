import React, { useState } from 'react';
import { t } from '@grafana/i18n';
import { AppPluginMeta, PluginConfigPageProps, PluginMeta } from '@grafana/data';
import { Alert, Stack } from '@grafana/ui';
import { BackendStatusAlert } from '../BackendStatusAlert';
import { testIds } from '../testIds';
import { AgentEditor } from './AgentEditor';
import { Agents } from './Agents';
import { AgentSetting } from './agentApi';
import { AllowListEditor } from './AllowListEditor';
import { orgRole, ProfilerConfigSetting } from './profilerApi';
import { ProfilerConfigs } from './ProfilerConfigs';

/** AppSettings is the app's jsonData. */
export interface AppSettings {
  /** profilerConfigs is the allow-list of Ascend profiler config files the app may switch. */
  profilerConfigs?: ProfilerConfigSetting[];
  /** allowEditorsToWrite lets Editors switch metric_enable, not only Admins. */
  allowEditorsToWrite?: boolean;
  /** agents are the inferscope-agents beside deployments whose disk Grafana does not share. */
  agents?: AgentSetting[];
  /** agentCaCert is the PEM CA the app trusts the agents' certificates by. */
  agentCaCert?: string;
  /** agentClientCert is the app's PEM client certificate for agents requiring mTLS. */
  agentClientCert?: string;
}

export interface AppConfigProps extends PluginConfigPageProps<AppPluginMeta<AppSettings>> {}

/** AppConfig is the app's configuration page: backend status, the profiler switches and their allow-list. */
const AppConfig = ({ plugin }: AppConfigProps) => {
  const meta: PluginMeta<AppSettings> = plugin.meta;
  const [settings, setSettings] = useState<AppSettings>(meta.jsonData ?? {});
  const [reloadKey, setReloadKey] = useState(0);
  const role = orgRole();
  const isAdmin = role === 'Admin';
  const canWrite = isAdmin || (role === 'Editor' && !!settings.allowEditorsToWrite);
  return (
    <div data-testid={testIds.appConfig.container}>
      <Stack direction="column" gap={2}>
        {!meta.enabled && (
          <Alert severity="info" title={t('app-config.app-disabled.title', 'App disabled')}>
            {t('app-config.enable-the-app-to-use', 'Enable the app to use its dashboards and backend.')}
          </Alert>
        )}
        <BackendStatusAlert />
        <ProfilerConfigs canWrite={canWrite} reloadKey={reloadKey} />
        <Agents reloadKey={reloadKey} />
        {isAdmin && (
          <AgentEditor
            enabled={!!meta.enabled}
            pinned={!!meta.pinned}
            settings={settings}
            secureFields={meta.secureJsonFields ?? {}}
            onSaved={(s) => {
              setSettings(s);
              setReloadKey((k) => k + 1);
            }}
          />
        )}
        {isAdmin && (
          <AllowListEditor
            enabled={!!meta.enabled}
            pinned={!!meta.pinned}
            settings={settings}
            onSaved={(s) => {
              setSettings(s);
              setReloadKey((k) => k + 1);
            }}
          />
        )}
      </Stack>
    </div>
  );
};

export default AppConfig;
