import React from 'react';
import { t } from '@grafana/i18n';
import { CodeEditor, FieldValidationMessage } from '@grafana/ui';
import { testIds } from '../../../components/testIds';
import { QueryField } from './QueryField';

interface Props {
  value?: string;
  invalid?: string;
  onChange: (expr: string, run: boolean) => void;
}

/** PromQLSection edits a `promql` query's expression in Grafana's code editor; Shift+Enter / blur runs it. */
export function PromQLSection({ value, invalid, onChange }: Props) {
  return (
    <QueryField
      label={t('prom-q-l-section.promql-expression.label', 'PromQL expression')}
      description={t(
        'prom-q-l-section.sent-as-is-to-the.description',
        'Sent as is to the Prometheus server (Prometheus mode only). Template variables are expanded.'
      )}
    >
      <div>
        <div
          data-testid={testIds.queryEditor.expr}
          aria-label={t('prom-q-l-section.promql-expression.aria', 'PromQL expression')}
        >
          <CodeEditor
            language="promql"
            value={value ?? ''}
            height={80}
            showLineNumbers={false}
            showMiniMap={false}
            monacoOptions={{ wordWrap: 'on', lineNumbers: 'off', scrollBeyondLastLine: false }}
            onBlur={(expr) => onChange(expr, true)}
            onSave={(expr) => onChange(expr, true)}
          />
        </div>
        {invalid && <FieldValidationMessage>{invalid}</FieldValidationMessage>}
      </div>
    </QueryField>
  );
}
