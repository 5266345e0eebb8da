import React from 'react';
import { DataSourcePluginOptionsEditorProps } from '@grafana/data';
import { Button, Field, FieldSet, Input, RadioButtonGroup, Stack } from '@grafana/ui';
import { testIds } from '../../components/testIds';
import { Endpoint, Mode, VllmOptions } from '../types';

type Props = DataSourcePluginOptionsEditorProps<VllmOptions>;

const MODES: Array<{ label: string; value: Mode; description: string }> = [
  { label: 'Direct', value: 'direct', description: 'Scrape vLLM /metrics endpoints and keep history in memory.' },
  { label: 'Prometheus', value: 'prometheus', description: 'Query a Prometheus-compatible server that scrapes vLLM.' },
];

/** ConfigEditor edits the mode, the endpoints and the scrape interval of a data source. */
export function ConfigEditor({ options, onOptionsChange }: Props) {
  const jsonData = options.jsonData;
  const mode = jsonData.mode ?? 'direct';
  const endpoints = jsonData.endpoints ?? [];

  const update = (patch: Partial<VllmOptions>) =>
    onOptionsChange({ ...options, jsonData: { ...jsonData, ...patch } });
  const setEndpoint = (i: number, patch: Partial<Endpoint>) =>
    update({ endpoints: endpoints.map((e, j) => (j === i ? { ...e, ...patch } : e)) });

  return (
    <FieldSet label="vLLM metrics">
      <Field label="Mode" description={MODES.find((m) => m.value === mode)?.description}>
        <div data-testid={testIds.configEditor.mode}>
          <RadioButtonGroup options={MODES} value={mode} onChange={(v) => update({ mode: v })} />
        </div>
      </Field>
      {mode === 'direct' && (
        <>
          <Field label="Endpoints" description="Each vLLM, vLLM-Ascend or Dynamo /metrics URL, with an optional name.">
            <Stack direction="column" gap={1}>
              {endpoints.map((e, i) => (
                <Stack key={i} direction="row" gap={1}>
                  <Input
                    aria-label={`Endpoint ${i + 1} URL`}
                    data-testid={testIds.configEditor.endpointUrl(i)}
                    placeholder="http://vllm-0:8000/metrics"
                    value={e.url}
                    width={48}
                    onChange={(ev) => setEndpoint(i, { url: ev.currentTarget.value })}
                  />
                  <Input
                    aria-label={`Endpoint ${i + 1} name`}
                    data-testid={testIds.configEditor.endpointName(i)}
                    placeholder="name (optional)"
                    value={e.name ?? ''}
                    width={24}
                    onChange={(ev) => setEndpoint(i, { name: ev.currentTarget.value })}
                  />
                  <Button
                    aria-label={`Remove endpoint ${i + 1}`}
                    data-testid={testIds.configEditor.removeEndpoint(i)}
                    icon="trash-alt"
                    variant="secondary"
                    onClick={() => update({ endpoints: endpoints.filter((_, j) => j !== i) })}
                  />
                </Stack>
              ))}
              <div>
                <Button
                  data-testid={testIds.configEditor.addEndpoint}
                  icon="plus"
                  variant="secondary"
                  onClick={() => update({ endpoints: [...endpoints, { url: '' }] })}
                >
                  Add endpoint
                </Button>
              </div>
            </Stack>
          </Field>
          <Field label="Scrape interval" description="How often each endpoint is scraped, e.g. 5s.">
            <Input
              aria-label="Scrape interval"
              data-testid={testIds.configEditor.scrapeInterval}
              placeholder="5s"
              value={jsonData.scrapeInterval ?? ''}
              width={12}
              onChange={(ev) => update({ scrapeInterval: ev.currentTarget.value })}
            />
          </Field>
        </>
      )}
    </FieldSet>
  );
}
