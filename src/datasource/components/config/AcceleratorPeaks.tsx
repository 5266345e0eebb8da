import React from 'react';
import { t } from '@grafana/i18n';
import { Combobox, Field, Stack } from '@grafana/ui';
import { tf } from '../../../i18n';
import { testIds } from '../../../components/testIds';
import { ACCELERATORS, DEFAULT_ACCELERATOR, VllmOptions } from '../../types';
import { NumberInput } from './SettingInput';

interface Props {
  jsonData: VllmOptions;
  errors: { peaks?: string };
  update: (patch: Partial<VllmOptions>) => void;
}

/**
 * AcceleratorPeaks picks the GPU or NPU whose peak compute and memory bandwidth MFU queries divide by, from the
 * backend's presets (pkg/measure), or takes custom peaks for an accelerator not listed.
 */
export function AcceleratorPeaks({ jsonData, errors, update }: Props) {
  const id = jsonData.accelerator ?? DEFAULT_ACCELERATOR;
  const preset = ACCELERATORS.find((a) => a.value === id);
  const options = ACCELERATORS.map((a) => ({
    value: a.value,
    label: a.label,
    description: tf('accelerator-peaks.preset.description', '{{tflops}} TFLOP/s, {{tbps}} TB/s', {
      tflops: a.tflops,
      tbps: a.tbps,
    }),
  }));
  return (
    <Stack direction="row" gap={2} wrap="wrap">
      <Field
        label={t('accelerator-peaks.accelerator.label', 'Accelerator')}
        description={t(
          'accelerator-peaks.accelerator.description',
          'Its dense bf16 peak and memory bandwidth are what MFU and bandwidth utilisation divide by.'
        )}
      >
        <div data-testid={testIds.configEditor.accelerator}>
          <Combobox<string>
            aria-label={t('accelerator-peaks.accelerator.label', 'Accelerator')}
            options={options}
            value={id}
            width={32}
            onChange={(opt) => update({ accelerator: opt.value === DEFAULT_ACCELERATOR ? undefined : opt.value })}
          />
        </div>
      </Field>
      <NumberInput
        label={t('accelerator-peaks.tflops.label', 'Peak TFLOP/s')}
        description={t('accelerator-peaks.tflops.description', 'Replaces the preset, for an accelerator not listed.')}
        placeholder={String(preset?.tflops ?? '')}
        value={jsonData.peakTflops}
        error={errors.peaks}
        testId={testIds.configEditor.peakTflops}
        onChange={(peakTflops) => update({ peakTflops })}
      />
      <NumberInput
        label={t('accelerator-peaks.tbps.label', 'Peak memory TB/s')}
        description={t('accelerator-peaks.tbps.description', 'Replaces the preset, for an accelerator not listed.')}
        placeholder={String(preset?.tbps ?? '')}
        value={jsonData.peakMemoryTBps}
        error={errors.peaks}
        testId={testIds.configEditor.peakMemoryTBps}
        onChange={(peakMemoryTBps) => update({ peakMemoryTBps })}
      />
    </Stack>
  );
}
