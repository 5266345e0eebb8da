import React from 'react';
import { t } from '@grafana/i18n';
import { PluginPage } from '@grafana/runtime';
import { Stack, Text, TextLink } from '@grafana/ui';
import { BackendStatusAlert } from '../components/BackendStatusAlert';
import { testIds } from '../components/testIds';
import { DASHBOARDS } from '../constants';

/** Overview is the app's landing page: what ships with the app and whether its backend is up. */
export function Overview() {
  return (
    <PluginPage>
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
          <Text element="p" color="secondary">
            {t(
              'overview.fleet-wide-views-on-this',
              'Fleet-wide views on this page are not built yet; use the dashboards above.'
            )}
          </Text>
        </Stack>
      </div>
    </PluginPage>
  );
}

export default Overview;
