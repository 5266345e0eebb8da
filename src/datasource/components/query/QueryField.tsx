import React from 'react';
import { EditorField } from '@grafana/plugin-ui';
import { Text } from '@grafana/ui';

interface Props {
  label: string;
  /** description stays visible under the control: operators read what a field means without hovering. */
  description?: string;
  invalid?: boolean;
  error?: string;
  children: React.ReactElement<{ invalid?: boolean }>;
}

/** QueryField is one field of the query editor: Grafana's EditorField with its description shown. */
export function QueryField({ label, description, invalid, error, children }: Props) {
  return (
    <EditorField label={label} invalid={invalid} error={error}>
      <Described description={description}>{children}</Described>
    </EditorField>
  );
}

/** Described shows a control with its description; Field passes `invalid` down, which goes on to the control. */
function Described({
  description,
  invalid,
  children,
}: {
  description?: string;
  invalid?: boolean;
  children: React.ReactElement<{ invalid?: boolean }>;
}) {
  return (
    <div>
      {invalid ? React.cloneElement(children, { invalid }) : children}
      {description && (
        <div style={{ maxWidth: 360, marginTop: 4 }}>
          <Text variant="bodySmall" color="secondary">
            {description}
          </Text>
        </div>
      )}
    </div>
  );
}
