import React from 'react';
import { t } from '@grafana/i18n';
import { PluginPage } from '@grafana/runtime';
import { Stack, Text, TextLink } from '@grafana/ui';
import { BackendStatusAlert } from '../components/BackendStatusAlert';
import { testIds } from '../components/testIds';
import { DASHBOARDS } from '../constants';

/** OverviewBody says what ships with the app and whether its backend is up (the fleet page's About tab). */
export function OverviewBody() {
  return (
    <div data-testid={testIds.overview.container}>
      <Stack direction="column" gap={2}>
        <Text element="p">
          {t(
            'overview.intro',
            'InferScope turns vLLM, vLLM-Ascend and NVIDIA Dynamo metrics into the numbers operators act on: KV-cache usage, speculative-decoding acceptance, data-parallel balance, latency quantiles and token throughput. Add a "vLLM (InferScope)" data source pointing at your endpoints or at Prometheus, then open a dashboard.'
          )}
        </Text>
        <BackendStatusAlert />
        <div data-testid={testIds.overview.dashboards}>
          <Text element="h3">{t('overview.dashboards', 'Dashboards')}</Text>
          <ul>
            {DASHBOARDS.map((d) => (
              <li key={d.uid}>
                <TextLink href={`/d/${d.uid}`} inline={false}>
                  {d.title}
                </TextLink>
              </li>
            ))}
          </ul>
        </div>
      </Stack>
    </div>
  );
}

/** Overview is OverviewBody as a page of its own. */
export function Overview() {
  return (
    <PluginPage>
      <OverviewBody />
    </PluginPage>
  );
}

export default Overview;
