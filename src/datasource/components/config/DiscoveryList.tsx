import React from 'react';
import { t } from '@grafana/i18n';
import { tf } from '../../../i18n';
import { Button, Field, FieldValidationMessage, Input, RadioButtonGroup, Stack, Text } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { DISCOVERY_TYPES, KUBERNETES_ROLES, SETTINGS } from '../../settings.gen';
import { DiscoveryMatch, DiscoverySource, DiscoveryType, KubernetesRole } from '../../types';
import { toNumber } from '../CommitInput';
import { DurationInput } from './SettingInput';

interface Props {
  sources: DiscoverySource[];
  interval?: string;
  error?: string;
  onChange: (sources: DiscoverySource[]) => void;
  onIntervalChange: (interval: string | undefined) => void;
}

/** EXAMPLES are placeholder values: names, addresses and labels that read the same in every language. */
const EXAMPLES = {
  port: '8000',
  dnsName: 'vllm.llm.svc.cluster.local',
  dnsServer: '10.96.0.10:53',
  namespaces: 'llm',
  labelSelector: 'llm-d.ai/inferenceServing=true',
  portName: 'http',
  kubeconfig: '/etc/grafana/kubeconfig',
  url: 'http://sd.internal:8080/vllm.json',
  path: '/etc/grafana/vllm-targets.json',
  podTemplate: '{__meta_kubernetes_pod_name}',
  addressTemplate: '{__address__}',
  roleLabel: 'llm-d.ai/role',
  roleRegex: 'prefill|decode',
  modelLabel: 'llm-d.ai/model',
};

/** RECORD_TYPES are the DNS record types a dns source asks (names, the same in every language). */
const RECORD_TYPES = ['A', 'AAAA', 'SRV'];

/** defaultName is the backend's Source.DisplayName of an unnamed source: "<type> #<n>". */
const defaultName = (type: DiscoveryType, i: number) => `${type} #${i + 1}`;

/** typeLabel is a source kind as the editor names it. */
function typeLabel(type: DiscoveryType): string {
  switch (type) {
    case 'dns':
      return t('discovery.type.dns', 'DNS');
    case 'kubernetes':
      return t('discovery.type.kubernetes', 'Kubernetes');
    case 'http':
      return t('discovery.type.http', 'HTTP SD');
    case 'file':
      return t('discovery.type.file', 'File SD');
  }
}

/** roleLabel is what a kubernetes source follows, as the editor names it. */
function roleLabel(role: KubernetesRole): string {
  switch (role) {
    case 'pod':
      return t('discovery.kubernetes-role.pod', 'Pods');
    case 'endpointslice':
      return t('discovery.kubernetes-role.endpointslice', 'EndpointSlices');
  }
}

/** TextInput is one labelled text setting of a source; an empty value is left out of jsonData. */
function TextInput({
  label,
  value,
  placeholder,
  width = 32,
  onChange,
}: {
  label: string;
  value?: string;
  placeholder?: string;
  width?: number;
  onChange: (v: string | undefined) => void;
}) {
  return (
    <Field label={label}>
      <Input
        aria-label={label}
        value={value ?? ''}
        placeholder={placeholder}
        width={width}
        onChange={(e) => onChange(e.currentTarget.value || undefined)}
      />
    </Field>
  );
}

/** Rules edits a source's keep or drop rules: a label and an anchored regex each. */
function Rules({
  title,
  rules,
  onChange,
}: {
  title: string;
  rules: DiscoveryMatch[];
  onChange: (rules: DiscoveryMatch[] | undefined) => void;
}) {
  const set = (i: number, patch: Partial<DiscoveryMatch>) =>
    onChange(rules.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <Stack direction="column" gap={0.5}>
      <Text variant="bodySmall" color="secondary">
        {title}
      </Text>
      {rules.map((r, i) => (
        <Stack key={i} direction="row" gap={1}>
          <Input
            aria-label={tf('discovery.rule.label', '{{title}} rule {{n}} label', { title, n: i + 1 })}
            placeholder={EXAMPLES.roleLabel}
            value={r.label}
            width={24}
            onChange={(e) => set(i, { label: e.currentTarget.value })}
          />
          <Input
            aria-label={tf('discovery.rule.regex', '{{title}} rule {{n}} regex', { title, n: i + 1 })}
            placeholder={EXAMPLES.roleRegex}
            value={r.regex}
            width={24}
            onChange={(e) => set(i, { regex: e.currentTarget.value })}
          />
          <Button
            aria-label={tf('discovery.rule.remove', 'Remove {{title}} rule {{n}}', { title, n: i + 1 })}
            icon="trash-alt"
            variant="secondary"
            onClick={() => {
              const rest = rules.filter((_, j) => j !== i);
              onChange(rest.length ? rest : undefined);
            }}
          />
        </Stack>
      ))}
      <div>
        <Button
          size="sm"
          variant="secondary"
          icon="plus"
          onClick={() => onChange([...rules, { label: '', regex: '' }])}
        >
          {tf('discovery.rule.add', 'Add {{title}} rule', { title })}
        </Button>
      </div>
    </Stack>
  );
}

/** SourceFields are the fields of one source's kind. */
function SourceFields({ s, set }: { s: DiscoverySource; set: (patch: Partial<DiscoverySource>) => void }) {
  const port = (
    <TextInput
      label={t('discovery.port', 'Port')}
      value={s.port === undefined ? undefined : String(s.port)}
      placeholder={EXAMPLES.port}
      width={12}
      onChange={(v) => set({ port: toNumber(v) })}
    />
  );
  switch (s.type) {
    case 'dns':
      return (
        <Stack direction="row" gap={1} wrap="wrap">
          <TextInput
            label={t('discovery.dns-name', 'DNS name')}
            value={s.dnsName}
            placeholder={EXAMPLES.dnsName}
            onChange={(dnsName) => set({ dnsName })}
          />
          <Field label={t('discovery.record-type', 'Record type')}>
            <RadioButtonGroup
              options={RECORD_TYPES.map((r) => ({ label: r, value: r }))}
              value={s.recordType ?? 'A'}
              onChange={(recordType) => set({ recordType })}
            />
          </Field>
          {(s.recordType ?? 'A') !== 'SRV' && port}
          <TextInput
            label={t('discovery.dns-server', 'DNS server (optional)')}
            value={s.dnsServer}
            placeholder={EXAMPLES.dnsServer}
            width={20}
            onChange={(dnsServer) => set({ dnsServer })}
          />
        </Stack>
      );
    case 'kubernetes': {
      const role = s.kubernetesRole ?? KUBERNETES_ROLES[0];
      return (
        <Stack direction="row" gap={1} wrap="wrap">
          <Field label={t('discovery.kubernetes-role.label', 'Follows')}>
            <RadioButtonGroup
              options={KUBERNETES_ROLES.map((r) => ({ label: roleLabel(r), value: r }))}
              value={role}
              onChange={(r) => set({ kubernetesRole: r === KUBERNETES_ROLES[0] ? undefined : r })}
            />
          </Field>
          <TextInput
            label={t('discovery.namespaces', 'Namespaces (comma-separated; empty: all)')}
            value={s.namespaces?.join(',')}
            placeholder={EXAMPLES.namespaces}
            onChange={(v) =>
              set({
                namespaces: v
                  ? v
                      .split(',')
                      .map((n) => n.trim())
                      .filter(Boolean)
                  : undefined,
              })
            }
          />
          <TextInput
            label={t('discovery.label-selector', 'Label selector')}
            value={s.labelSelector}
            placeholder={EXAMPLES.labelSelector}
            onChange={(labelSelector) => set({ labelSelector })}
          />
          <TextInput
            label={
              role === 'pod'
                ? t('discovery.port-name', 'Container port name')
                : t('discovery.slice-port-name', 'Port name (in the slice)')
            }
            value={s.portName}
            placeholder={EXAMPLES.portName}
            width={16}
            onChange={(portName) => set({ portName })}
          />
          {port}
          <TextInput
            label={t('discovery.kubeconfig', 'Kubeconfig path (empty: in-cluster service account)')}
            value={s.kubeconfig}
            placeholder={EXAMPLES.kubeconfig}
            onChange={(kubeconfig) => set({ kubeconfig })}
          />
        </Stack>
      );
    }
    case 'http':
      return (
        <TextInput
          label={t('discovery.url', 'http_sd URL')}
          value={s.url}
          placeholder={EXAMPLES.url}
          width={48}
          onChange={(url) => set({ url })}
        />
      );
    case 'file':
      return (
        <TextInput
          label={t('discovery.path', 'file_sd path (JSON or YAML)')}
          value={s.path}
          placeholder={EXAMPLES.path}
          width={48}
          onChange={(path) => set({ path })}
        />
      );
  }
}

/**
 * DiscoveryList edits direct mode's discovery sources (DNS, Kubernetes, http_sd, file_sd) and their relabel rules;
 * Save & test lists what each one found.
 */
export function DiscoveryList({ sources, interval, error, onChange, onIntervalChange }: Props) {
  const setSource = (i: number, patch: Partial<DiscoverySource>) =>
    onChange(sources.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  return (
    <Field
      label={t('discovery.label', 'Discovery')}
      description={t(
        'discovery.description',
        'Endpoints found by DNS, Kubernetes, http_sd or file_sd, scraped beside the list above. A departed endpoint keeps its history and is shown as gone, not down. Save & test lists what each source found.'
      )}
    >
      <Stack direction="column" gap={1}>
        {error && <FieldValidationMessage>{error}</FieldValidationMessage>}
        {sources.length > 0 && (
          <DurationInput
            label={t('discovery.interval.label', 'Discovery interval')}
            description={t('discovery.interval.description', 'How often every source is asked again.')}
            placeholder={SETTINGS.defaultDiscoveryInterval}
            value={interval}
            testId={testIds.configEditor.discoveryInterval}
            onChange={onIntervalChange}
          />
        )}
        {sources.map((s, i) => (
          <Stack key={i} direction="column" gap={0.5}>
            <Stack direction="row" gap={1} alignItems="center">
              <div data-testid={testIds.configEditor.discoveryType(i)}>
                <RadioButtonGroup
                  options={DISCOVERY_TYPES.map((type) => ({ label: typeLabel(type), value: type }))}
                  value={s.type}
                  onChange={(type) => setSource(i, { type })}
                />
              </div>
              <Input
                aria-label={tf('discovery.name.aria', 'Source {{n}} name', { n: i + 1 })}
                placeholder={defaultName(s.type, i)}
                value={s.name ?? ''}
                width={24}
                onChange={(e) => setSource(i, { name: e.currentTarget.value || undefined })}
              />
              <Button
                aria-label={tf('discovery.remove', 'Remove source {{n}}', { n: i + 1 })}
                data-testid={testIds.configEditor.removeDiscovery(i)}
                icon="trash-alt"
                variant="secondary"
                onClick={() => onChange(sources.filter((_, j) => j !== i))}
              />
            </Stack>
            <SourceFields s={s} set={(patch) => setSource(i, patch)} />
            <Stack direction="row" gap={1} wrap="wrap">
              <TextInput
                label={t('discovery.name-template', 'Name template')}
                value={s.nameTemplate}
                placeholder={s.type === 'kubernetes' ? EXAMPLES.podTemplate : EXAMPLES.addressTemplate}
                onChange={(nameTemplate) => setSource(i, { nameTemplate })}
              />
              <TextInput
                label={t('discovery.role-label', 'Role label')}
                value={s.roleLabel}
                placeholder={EXAMPLES.roleLabel}
                width={20}
                onChange={(roleLabel) => setSource(i, { roleLabel })}
              />
              <TextInput
                label={t('discovery.model-label', 'Model label')}
                value={s.modelLabel}
                placeholder={EXAMPLES.modelLabel}
                width={20}
                onChange={(modelLabel) => setSource(i, { modelLabel })}
              />
            </Stack>
            <Stack direction="row" gap={2} wrap="wrap">
              <Rules
                title={t('discovery.keep', 'Keep')}
                rules={s.keep ?? []}
                onChange={(keep) => setSource(i, { keep })}
              />
              <Rules
                title={t('discovery.drop', 'Drop')}
                rules={s.drop ?? []}
                onChange={(drop) => setSource(i, { drop })}
              />
            </Stack>
          </Stack>
        ))}
        <div>
          <Button
            data-testid={testIds.configEditor.addDiscovery}
            variant="secondary"
            icon="plus"
            disabled={sources.length >= SETTINGS.maxDiscoverySources}
            onClick={() => onChange([...sources, { type: 'dns' }])}
          >
            {t('discovery.add', 'Add discovery source')}
          </Button>
        </div>
      </Stack>
    </Field>
  );
}
