import React, { useState } from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { getBackendSrv } from '@grafana/runtime';
import { Button, Field, FieldValidationMessage, Input, Stack, Text } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { errorMessage } from '../../hooks/useResource';
import { Detection, Endpoint, ProbeResult } from '../../types';

interface Props {
  /** uid of the saved data source; tests of one endpoint go to its probe resource. */
  uid: string;
  endpoints: Endpoint[];
  errors: Record<number, string>;
  missing?: string;
  onChange: (endpoints: Endpoint[]) => void;
}

type TestState = { loading: true } | { loading: false; result?: ProbeResult; error?: string };

/** describeDetection turns a detection into one line: flavor, ranks, speculative decoding, Ascend profiler. */
export function describeDetection(d?: Detection): string {
  if (!d) {
    return '';
  }
  const parts = [d.flavor];
  if (d.ranks?.length) {
    parts.push(
      tf('endpoint-list.detection.ranks', '{{n}} {{label}} rank(s)', {
        n: d.ranks.length,
        label: d.rankLabel || 'engine',
      })
    );
  }
  if (d.specDecode) {
    parts.push(t('endpoint-list.detection.spec', 'speculative decoding on'));
  }
  if (d.ascendProfiler) {
    parts.push(t('endpoint-list.detection.ascend', 'Ascend profiler metrics on'));
  }
  if (d.deprecatedNames) {
    parts.push(t('endpoint-list.detection.deprecated', 'deprecated metric names exposed'));
  }
  return parts.join(', ');
}

/**
 * probeEndpoint asks the saved data source to scrape one URL; only org admins may, and only for saved settings.
 * A URL that is not one of the saved endpoints gets the stored credentials only when useStoredCredentials is set.
 */
export async function probeEndpoint(uid: string, url: string, useStoredCredentials = false): Promise<ProbeResult> {
  return getBackendSrv().post<ProbeResult>(
    `/api/datasources/uid/${uid}/resources/probe`,
    useStoredCredentials ? { url, useStoredCredentials } : { url },
    { showErrorAlert: false }
  );
}

/** EndpointList edits direct mode's /metrics endpoints: add, remove, name, and test one endpoint. */
export function EndpointList({ uid, endpoints, errors, missing, onChange }: Props) {
  const [tests, setTests] = useState<Record<number, TestState>>({});
  const setEndpoint = (i: number, patch: Partial<Endpoint>) =>
    onChange(endpoints.map((e, j) => (j === i ? { ...e, ...patch } : e)));
  const runTest = async (i: number, useStoredCredentials = false) => {
    setTests((t) => ({ ...t, [i]: { loading: true } }));
    try {
      const result = await probeEndpoint(uid, endpoints[i].url, useStoredCredentials);
      setTests((t) => ({ ...t, [i]: { loading: false, result } }));
    } catch (err) {
      setTests((t) => ({
        ...t,
        [i]: {
          loading: false,
          error: tf(
            'endpoint-list.probe.failed',
            '{{error}} — testing one endpoint needs the data source saved in direct mode and the organization admin role.',
            { error: errorMessage(err) }
          ),
        },
      }));
    }
  };

  return (
    <Field
      label={t('endpoint-list.endpoints.label', 'Endpoints')}
      description={t(
        'endpoint-list.each-vllm-vllm-ascend-or.description',
        'Each vLLM, vLLM-Ascend or Dynamo /metrics URL, with an optional display name.'
      )}
    >
      <Stack direction="column" gap={1}>
        {missing && <FieldValidationMessage>{missing}</FieldValidationMessage>}
        {endpoints.map((e, i) => {
          const probe = tests[i];
          return (
            <Stack key={i} direction="column" gap={0}>
              <Stack direction="row" gap={1}>
                <Input
                  aria-label={tf('endpoint-list.url.aria', 'Endpoint {{n}} URL', { n: i + 1 })}
                  data-testid={testIds.configEditor.endpointUrl(i)}
                  // eslint-disable-next-line @grafana/i18n/no-untranslated-strings -- an example value, the same in every language
                  placeholder="http://vllm-0:8000/metrics"
                  value={e.url}
                  invalid={Boolean(errors[i])}
                  width={48}
                  onChange={(ev) => setEndpoint(i, { url: ev.currentTarget.value })}
                />
                <Input
                  aria-label={tf('endpoint-list.name.aria', 'Endpoint {{n}} name', { n: i + 1 })}
                  data-testid={testIds.configEditor.endpointName(i)}
                  placeholder={t('endpoint-list.name-optional.placeholder', 'name (optional)')}
                  value={e.name ?? ''}
                  width={24}
                  onChange={(ev) => setEndpoint(i, { name: ev.currentTarget.value || undefined })}
                />
                <Button
                  aria-label={tf('endpoint-list.test-endpoint', 'Test endpoint {{n}}', { n: i + 1 })}
                  data-testid={testIds.configEditor.testEndpoint(i)}
                  icon={probe?.loading ? 'spinner' : 'heart-rate'}
                  variant="secondary"
                  disabled={Boolean(errors[i]) || !e.url || probe?.loading}
                  tooltip={t(
                    'endpoint-list.scrape-this-url-once-with.tooltip',
                    'Scrape this URL once with the saved settings'
                  )}
                  onClick={() => runTest(i)}
                >
                  {t('endpoint-list.test', 'Test')}
                </Button>
                <Button
                  aria-label={tf('endpoint-list.remove-endpoint', 'Remove endpoint {{n}}', { n: i + 1 })}
                  data-testid={testIds.configEditor.removeEndpoint(i)}
                  icon="trash-alt"
                  variant="secondary"
                  onClick={() => {
                    setTests({});
                    onChange(endpoints.filter((_, j) => j !== i));
                  }}
                />
              </Stack>
              <div data-testid={testIds.configEditor.endpointMessage(i)} aria-live="polite">
                {errors[i] && <Text color="error">{errors[i]}</Text>}
                {probe && !probe.loading && probe.error && <Text color="error">{probe.error}</Text>}
                {probe && !probe.loading && probe.result && (
                  <Text color={probe.result.up ? 'success' : 'error'}>
                    {probe.result.up
                      ? tf('endpoint-list.probe.up', 'Up: {{detection}}; {{samples}} samples', {
                          detection: describeDetection(probe.result.detection),
                          samples: probe.result.samples ?? 0,
                        })
                      : tf('endpoint-list.probe.down', 'Down: {{error}}', {
                          error: probe.result.error ?? t('endpoint-list.probe.no-answer', 'no answer'),
                        })}
                  </Text>
                )}
                {probe && !probe.loading && probe.result && !probe.result.up && (
                  <Button
                    size="sm"
                    fill="text"
                    data-testid={testIds.configEditor.testEndpointWithCredentials(i)}
                    tooltip={t(
                      'endpoint-list.an-unsaved-url-is-tested.tooltip',
                      "An unsaved URL is tested without the data source's credentials; send them to this URL"
                    )}
                    onClick={() => runTest(i, true)}
                  >
                    {t('endpoint-list.test-again-with-the-saved', 'Test again with the saved credentials')}
                  </Button>
                )}
              </div>
            </Stack>
          );
        })}
        <div>
          <Button
            data-testid={testIds.configEditor.addEndpoint}
            icon="plus"
            variant="secondary"
            onClick={() => onChange([...endpoints, { url: '' }])}
          >
            {t('endpoint-list.add-endpoint', 'Add endpoint')}
          </Button>
        </div>
      </Stack>
    </Field>
  );
}
